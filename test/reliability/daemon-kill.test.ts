import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { apiClient } from './helpers/daemon-api.js';
import { ms, percentile, report } from './helpers/figures.js';
import { ShimLoad } from './helpers/load.js';
import { OwnedPostgres, PASSWORD_ROLE } from './helpers/owned-postgres.js';
import { alive, daemonPids, killHome, processesOfHome, sleep, waitFor } from './helpers/procs.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const require = createRequire(import.meta.url);
const SECRET = plantSecret('kill');
const pgi = await OwnedPostgres.create({ password: SECRET });

const RESTARTED = /^DAEMON_RESTARTED: The hanactl daemon stopped while handling this call; the call can be retried\.$/;
const SQL = {
  pg: 'SELECT count(*) AS n FROM generate_series(1, 600000)',
  lite: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT count(*) AS n FROM c',
};

describe.skipIf(!pgi)('the daemon killed with SIGKILL', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  const dataDir = mkdtempSync(join(tmpdir(), 'hanactl-kill-data-'));
  const before: string[] = [];
  const shims: ShimHandle[] = [];
  /** Sessions that chose a connection other than their --connection before the kills; each must keep it. */
  const chosen: { shim: ShimHandle; connection: string }[] = [];

  beforeAll(async () => {
    scan.addHome(home.dir);
    const Database = require('better-sqlite3-multiple-ciphers');
    const db = new Database(join(dataDir, 'lite.db'));
    db.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);');
    db.close();
    const url = (q: string) => (pgi as OwnedPostgres).url(PASSWORD_ROLE, q);
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(dataDir, 'lite.db')}`]);
    await home.ok(['add', '--no-test', 'pg', url('application_name=hanactl-kill'), '--password-stdin'], { input: `${SECRET}\n` });
    for (let i = 0; i < 8; i++) {
      await home.ok(
        [
          'add',
          '--no-test',
          `keep-${i}`,
          i % 2 ? `sqlite:${join(dataDir, `k${i}.db`)}` : url(`application_name=keep${i}`),
          '--password-stdin',
        ],
        { input: SECRET },
      );
    }
    before.push('lite', 'pg', ...Array.from({ length: 8 }, (_, i) => `keep-${i}`));
    for (let i = 0; i < 4; i++) shims.push(await startShim(home.env, ['--connection', i % 2 ? 'lite' : 'pg'], `kill-shim-${i}`));
    for (const [start, pick] of [
      ['lite', 'keep-0'],
      ['pg', 'keep-2'],
    ] as const) {
      const shim = await startShim(home.env, ['--connection', start], `kill-chooser-${pick}`);
      const used = await shim.call('use_connection', { name: pick });
      expect(used.isError, textOf(used)).toBeFalsy();
      chosen.push({ shim, connection: pick });
    }
  });

  afterAll(async () => {
    await Promise.all([...shims, ...chosen.map((c) => c.shim)].map((s) => s.close().catch(() => {})));
    await home.stop();
    killHome(home.dir);
    await pgi?.dispose();
    rmSync(dataDir, { recursive: true, force: true });
    home.outputs.length = 0;
    rmSync(home.dir, { recursive: true, force: true });
  });

  it('in-flight calls say the broker restarted, the next calls start exactly one new daemon and succeed without a stall', async () => {
    const load = new ShimLoad(shims, (lane, n) => {
      const connection = (lane + n) % 2 ? 'lite' : 'pg';
      return { connection, sql: SQL[connection as 'pg' | 'lite'] };
    });
    const api = apiClient(home);
    interface Round {
      killed: number;
      daemonUpMs: number;
      daemonsAfter: number[];
      recoveryMs: number[];
      inFlight: number;
      restarted: number;
      otherErrors: string[];
      failedAfterRecovery: number;
    }
    const rounds: Round[] = [];
    try {
      await waitFor(() => load.records.filter((r) => r.ok).length >= 8, 10_000);
      for (let round = 0; round < 3; round++) {
        const [pid] = daemonPids(home.dir);
        expect(pid, 'a daemon serves the load').toBeDefined();
        await sleep(300 + Math.random() * 400);
        const at = performance.now();
        process.kill(pid as number, 'SIGKILL');
        const up = waitFor(
          () =>
            api.health().then(
              () => performance.now() - at,
              () => undefined,
            ),
          10_000,
          10,
        );
        // Every lane must see a success after the kill; then let the new daemon serve a while.
        await waitFor(() => shims.every((_, lane) => load.records.some((r) => r.lane === lane && r.startedAt > at && r.ok)), 10_000);
        await sleep(800);
        // Racing shims agree: losers of the start race exit on their own, one daemon is left.
        const settled = await waitFor(() => (daemonPids(home.dir).length === 1 ? daemonPids(home.dir) : undefined), 5000);
        const after = load.records.filter((r) => r.endedAt > at);
        const firstOk = shims.map((_, lane) => load.records.find((r) => r.lane === lane && r.startedAt > at && r.ok));
        rounds.push({
          killed: pid as number,
          daemonUpMs: (await up) ?? Number.NaN,
          daemonsAfter: settled ?? daemonPids(home.dir),
          recoveryMs: firstOk.map((r) => (r ? r.endedAt - at : Number.POSITIVE_INFINITY)),
          inFlight: after.filter((r) => r.startedAt < at).length,
          restarted: after.filter((r) => RESTARTED.test(r.text)).length,
          otherErrors: after.filter((r) => !r.ok && !RESTARTED.test(r.text)).map((r) => r.text),
          // Once a lane has succeeded after the kill, it keeps succeeding.
          failedAfterRecovery: after.filter((r) => !r.ok && r.startedAt > (firstOk[r.lane]?.startedAt ?? Number.POSITIVE_INFINITY)).length,
        });
      }
    } finally {
      await load.stop();
      api.close();
    }
    // Sessions idle through the kills resume with the connection they chose (restored from their
    // session id by the daemon that took over), and use it when a call names none.
    for (const { shim, connection } of chosen) {
      const current = await shim.call('current_connection');
      expect(textOf(current)).toContain(`Active: "${connection}"`);
      const ran = await shim.call('run_query', { sql: 'SELECT 1 AS one' });
      expect(ran.isError, textOf(ran)).toBeFalsy();
      scan.add('chooser stderr', shim.stderr());
    }
    for (const r of load.records) scan.add(`tool result lane ${r.lane}`, r.text);
    for (const s of shims) scan.add('shim stderr', s.stderr());

    // No process of the killed daemons is left: every process of this home is a shim, the one
    // daemon, or a child of that daemon (its SQLite workers).
    const daemon = daemonPids(home.dir)[0];
    const strayOf = () => processesOfHome(home.dir).filter((p) => !p.cmdline.includes(' mcp') && p.pid !== daemon && p.ppid !== daemon);
    await waitFor(() => strayOf().length === 0, 3000);
    const strays = strayOf().map((p) => `${p.pid} (parent ${p.ppid}) ${p.cmdline}`);
    // The registry is intact: every connection added before the kills is there.
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout) as { connections: { name: string }[] };
    const all = rounds.flatMap((r) => r.recoveryMs);
    const restarted = rounds.reduce((n, r) => n + r.restarted, 0);
    report('daemon-kill', {
      calls: load.records.length,
      kills: rounds.length,
      inFlightAtKill: rounds.map((r) => r.inFlight),
      daemonRestartedErrors: restarted,
      otherErrors: rounds.reduce((n, r) => n + r.otherErrors.length, 0),
      failedAfterRecovery: rounds.reduce((n, r) => n + r.failedAfterRecovery, 0),
      daemonAnswersMs: rounds.map((r) => ms(r.daemonUpMs)),
      recoveryMsPerLane: rounds.map((r) => r.recoveryMs.map(ms)),
      recoveryMsMax: ms(Math.max(...all)),
      recoveryMsP50: ms(percentile(all, 50)),
      lanesOver2s: all.filter((t) => t >= 2000).length,
      daemonsAfterEachKill: rounds.map((r) => r.daemonsAfter.length),
      strayProcesses: strays.length,
      connectionsIntact: `${connections.filter((c) => before.includes(c.name)).length}/${before.length}`,
    });

    for (const r of rounds) {
      expect(alive(r.killed)).toBe(false);
      expect(r.daemonsAfter).toHaveLength(1);
      expect(r.daemonsAfter[0]).not.toBe(r.killed);
      // How fast lanes recover is a speed figure: printed above (recoveryMsP50, lanesOver2s) and
      // not asserted, since on a shared 2-core machine it moves with the load (p50 1.5-1.9 s quiet,
      // 3-4.5 s loaded). What is asserted is that recovery never stalls: every lane within 10 s,
      // well under the 15 s an auto-start waits before it gives up.
      for (const taken of r.recoveryMs) expect(taken).toBeLessThan(10_000);
      // A failure is only ever "the broker restarted, retry", never another error.
      expect(r.otherErrors).toEqual([]);
      expect(r.failedAfterRecovery).toBe(0);
    }
    // The in-flight calls of the kills did see the fault (the retry message was exercised).
    expect(restarted).toBeGreaterThan(0);
    expect(strays).toEqual([]);
    expect(connections.map((c) => c.name).sort()).toEqual([...before].sort());
  }, 90_000);

  it('a kill during `hanactl add` leaves each connection whole (URL and password work) or absent', async () => {
    const pg = pgi as OwnedPostgres;
    // name -> how the add ended: 'ok' (exit 0 / 2xx), 'uncertain' (the daemon died under it),
    // 'refused' (no daemon answered; the add never reached one), or an exit code.
    const outcome = new Map<string, string>();
    let adding = true;
    let kills = 0;
    const killNow = () => {
      for (const pid of daemonPids(home.dir)) {
        try {
          process.kill(pid, 'SIGKILL');
          kills++;
        } catch {
          // exited meanwhile
        }
      }
    };
    // `hanactl add` in a loop; every other one has the daemon killed at a random moment of its life.
    const cliLanes = Array.from({ length: 2 }, async (_, lane) => {
      for (let i = 0; i < 10; i++) {
        const name = `a-${lane}-${i}`;
        // The kill always comes, during this add or, on a fast machine, after it, while the API
        // lanes' adds are in flight; the next add then starts a new daemon.
        const killed =
          i % 2 === 0 ? new Promise<void>((done) => setTimeout(() => done(killNow()), 150 + Math.random() * 300)) : undefined;
        const r = await home.run(['add', '--no-test', name, pg.url(PASSWORD_ROLE, `application_name=${name}`), '--password-stdin'], {
          input: SECRET,
        });
        await killed;
        // "could not start": the daemon this add started was itself killed before it answered.
        const how =
          r.code === 0 ? 'ok' : /can be retried/.test(r.stderr) ? 'uncertain' : /could not start/.test(r.stderr) ? 'refused' : undefined;
        outcome.set(name, how ?? `exit ${r.code}: ${r.stderr.trim()}`);
      }
    });
    // Adds straight on the API, many in flight, so kills land inside the registry write too.
    const api = apiClient(home);
    const apiLanes = Array.from({ length: 2 }, async (_, lane) => {
      for (let n = 0; adding; n++) {
        const name = `b-${lane}-${n}`;
        try {
          await api.addConnection({ name, url: pg.url(PASSWORD_ROLE, `application_name=${name}`), password: SECRET });
          outcome.set(name, 'ok');
          // Paced: each connection is tested against the server afterwards, and on a fast daemon
          // 5 ms apart made ~1,800 of them, whose tests outlasted the test's own time limit.
          await sleep(50);
        } catch (err) {
          const code = (err as { code?: string }).code;
          outcome.set(
            name,
            code === 'DAEMON_RESTARTED' ? 'uncertain' : code === 'DAEMON_UNAVAILABLE' ? 'refused' : `${code}: ${(err as Error).message}`,
          );
          scan.add('add error', (err as Error).message);
          await sleep(30);
        }
      }
    });
    try {
      await Promise.all(cliLanes);
    } finally {
      adding = false;
      await Promise.all(apiLanes);
    }
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout) as {
      connections: { name: string; url: string; hasPassword: boolean }[];
    };
    const byName = new Map(connections.map((c) => [c.name, c]));
    let whole = 0;
    let absent = 0;
    const torn: string[] = [];
    const lost: string[] = [];
    const strange: string[] = [];
    try {
      for (const [name, how] of outcome) {
        if (!['ok', 'uncertain', 'refused'].includes(how)) strange.push(`${name}: ${how}`);
        const found = byName.get(name);
        if (!found) {
          absent++;
          if (how === 'ok') lost.push(name); // reported added, then gone: not durable
          continue;
        }
        const works = await api.testConnection(name).then(
          () => true,
          (err: Error) => {
            scan.add('test error', err.message);
            return false;
          },
        );
        if (found.url === pg.url(PASSWORD_ROLE, `application_name=${name}`) && found.hasPassword && works) whole++;
        else torn.push(`${name}: url=${found.url} password=${found.hasPassword} works=${works}`);
      }
    } finally {
      api.close();
    }
    const count = (how: string) => [...outcome.values()].filter((h) => h === how).length;
    report('daemon-kill-during-add', {
      adds: outcome.size,
      cliAdds: [...outcome.keys()].filter((n) => n.startsWith('a-')).length,
      kills,
      ok: count('ok'),
      uncertain: count('uncertain'),
      refused: count('refused'),
      otherOutcomes: strange.length,
      presentWhole: whole,
      absent,
      uncertainButPresent: [...outcome].filter(([n, h]) => h === 'uncertain' && byName.has(n)).length,
      torn: torn.length,
      lostAfterSuccess: lost.length,
    });
    expect(kills).toBeGreaterThan(0);
    // How many kills landed mid-add depends on timing (reported above); whatever they hit, no
    // connection may be torn or lost after a success.
    expect(strange).toEqual([]);
    expect(torn).toEqual([]);
    expect(lost).toEqual([]);
    // Connections added before any kill are still all there.
    for (const name of before) expect(byName.has(name), name).toBe(true);
  }, 120_000);

  it('leaks the planted password nowhere: tool results, CLI output, shim stderr, logs, registry, audit', async () => {
    await home.stop();
    for (const out of home.outputs) scan.add('cli output', out);
    const { hits, scannedFiles } = scan.hits();
    report('daemon-kill-secrets', { scannedFiles, hits: hits.length });
    expect(hits).toEqual([]);
  });
});
