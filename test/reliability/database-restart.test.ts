import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolStats } from '../../shared/schemas.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { apiClient } from './helpers/daemon-api.js';
import { unexpectedErrors, writeConfig } from './helpers/daemon-log.js';
import { ms, percentile, report } from './helpers/figures.js';
import { ApiLoad } from './helpers/load.js';
import { OwnedMariadb, PASSWORD_USER } from './helpers/owned-mariadb.js';
import { OwnedPostgres, PASSWORD_ROLE } from './helpers/owned-postgres.js';
import { killHome, sleep, waitFor } from './helpers/procs.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('dbrestart');
const pgi = await OwnedPostgres.create({ password: SECRET });
const mdb = await OwnedMariadb.create({ password: SECRET });

const TIMEOUT_MS = 3000;
/** How long past its own timeout a call may take to come back (scheduling, KILL round trips). */
const SLACK_MS = 1500;
const POOL_MAX = 4;
const APP = 'hanactl-restart';

interface Scenario {
  readonly connection: 'pg' | 'my';
  readonly sql: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  accepting(): Promise<boolean>;
  /** Connections the server holds for the daemon's pool. */
  serverCount(): Promise<number>;
}

/** A clean stop and a crash of each engine; the crash is followed by a shorter outage. */
type RestartCase = { readonly title: string; readonly downMs: number; readonly reportAs: string } & (
  | { readonly engine: 'postgres'; readonly stop: 'fast' | 'immediate' }
  | { readonly engine: 'mariadb'; readonly stop: 'SIGTERM' | 'SIGKILL' }
);

const CASES: readonly RestartCase[] = [
  {
    title: 'PostgreSQL (pg_ctl stop -m fast, then start): no hang, dead connections dropped, calls back within 1 s',
    engine: 'postgres',
    stop: 'fast',
    downMs: 1500,
    reportAs: 'database-restart-postgres',
  },
  {
    title: 'PostgreSQL crash (pg_ctl stop -m immediate), then start',
    engine: 'postgres',
    stop: 'immediate',
    downMs: 1000,
    reportAs: 'database-crash-postgres',
  },
  {
    title: 'MariaDB (SIGTERM, then start): no hang, dead connections dropped, calls back within 1 s',
    engine: 'mariadb',
    stop: 'SIGTERM',
    downMs: 1500,
    reportAs: 'database-restart-mariadb',
  },
  {
    title: 'MariaDB crash (SIGKILL), then start',
    engine: 'mariadb',
    stop: 'SIGKILL',
    downMs: 1000,
    reportAs: 'database-crash-mariadb',
  },
];

describe.skipIf(!pgi || !mdb)('a database restarted under load', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  const api = apiClient(home);

  beforeAll(async () => {
    scan.addHome(home.dir);
    writeConfig(home.dir, { connectTimeoutMs: 2000, pool: { max: POOL_MAX } });
    await home.ok(['add', '--no-test', 'pg', (pgi as OwnedPostgres).url(PASSWORD_ROLE, `application_name=${APP}`), '--password-stdin'], {
      input: SECRET,
    });
    await home.ok(['add', '--no-test', 'my', (mdb as OwnedMariadb).url(PASSWORD_USER), '--password-stdin'], { input: SECRET });
  });

  afterAll(async () => {
    api.close();
    await home.stop();
    killHome(home.dir);
    await pgi?.dispose();
    await mdb?.dispose();
    rmSync(home.dir, { recursive: true, force: true });
  });

  async function restartUnderLoad(s: Scenario, downMs: number) {
    const load = new ApiLoad(
      4,
      () => ({ connection: s.connection, run: () => api.query({ connection: s.connection, sql: s.sql, timeoutMs: TIMEOUT_MS }) }),
      { pauseMs: 10, hangMs: TIMEOUT_MS + 5000 },
    );
    let downAt = 0;
    let acceptingAt = 0;
    let statsBefore: PoolStats | undefined;
    try {
      await waitFor(() => load.records.filter((r) => r.ok).length >= 20, 10_000);
      statsBefore = (await api.pools()).find((p) => p.connections.includes(s.connection));
      downAt = performance.now();
      await s.stop();
      await sleep(downMs);
      const starting = s.start();
      await waitFor(() => s.accepting(), 30_000, 10);
      acceptingAt = performance.now();
      await starting;
      await waitFor(() => load.records.some((r) => r.startedAt > acceptingAt + 1000 && r.ok), 10_000);
      await sleep(1000);
    } finally {
      await load.stop();
    }
    const records = load.records;
    const running = load.hung.length > 0 ? await api.request('GET', '/v1/queries') : undefined;
    for (const r of records) scan.add(`${s.connection} call`, r.text);
    const firstOk = records.filter((r) => r.ok && r.endedAt > acceptingAt).sort((a, b) => a.endedAt - b.endedAt)[0];
    const lateFailures = records.filter((r) => !r.ok && r.startedAt > acceptingAt + 1000);
    const outage = records.filter((r) => r.endedAt > downAt && r.startedAt < acceptingAt);
    const durations = records.map((r) => r.endedAt - r.startedAt);
    const statsAfter = (await api.pools()).find((p) => p.connections.includes(s.connection)) as PoolStats;
    // Idle connections in the pool are the server's only connections for it: nothing leaked.
    await sleep(200);
    const server = await s.serverCount();
    const figures = {
      calls: records.length,
      failed: records.filter((r) => !r.ok).length,
      failedDuringOutage: outage.filter((r) => !r.ok).length,
      outageMs: ms(acceptingAt - downAt),
      maxCallMs: ms(Math.max(...durations)),
      p99CallMs: ms(percentile(durations, 99)),
      maxFailedCallMsDuringOutage: ms(Math.max(0, ...outage.filter((r) => !r.ok).map((r) => r.endedAt - r.startedAt))),
      recoveryMs: firstOk ? ms(firstOk.endedAt - acceptingAt) : 'never',
      failuresLaterThan1sAfterAccepting: lateFailures.length,
      poolDestroyed: (statsAfter.destroyed ?? 0) - (statsBefore?.destroyed ?? 0),
      poolErrors: (statsAfter.errors ?? 0) - (statsBefore?.errors ?? 0),
      poolAfter: { total: statsAfter.total, idle: statsAfter.idle, inUse: statsAfter.inUse, waiting: statsAfter.waiting },
      serverConnections: server,
      hungCalls: load.hung.length,
      ...(running ? { runningAtEnd: running } : {}),
      errorKinds: [...new Set(records.filter((r) => !r.ok).map((r) => r.text.split(':')[0]))],
    };
    return { figures, firstOk, lateFailures, durations, statsAfter, server, records };
  }

  function check(result: Awaited<ReturnType<typeof restartUnderLoad>>) {
    // No call hangs past its timeout.
    expect(result.figures.hungCalls).toBe(0);
    expect(Math.max(...result.durations)).toBeLessThan(TIMEOUT_MS + SLACK_MS);
    // Calls succeed within 1 s of the database accepting connections again, and keep succeeding.
    expect(result.firstOk).toBeDefined();
    expect(result.figures.recoveryMs).toBeLessThan(1000);
    expect(result.lateFailures.map((r) => r.text)).toEqual([]);
    // The connections that died with the server were discarded, not lent again.
    expect(result.figures.poolDestroyed + result.figures.poolErrors).toBeGreaterThan(0);
    expect(result.statsAfter.total).toBeLessThanOrEqual(POOL_MAX);
    expect(result.server).toBe(result.statsAfter.total);
  }

  /** How each engine is stopped, started and counted, given the way it is stopped. */
  function scenario(c: RestartCase): Scenario {
    if (c.engine === 'postgres') {
      const pg = pgi as OwnedPostgres;
      return {
        connection: 'pg',
        sql: 'SELECT count(*) AS n FROM generate_series(1, 20000)',
        stop: () => pg.stop(c.stop),
        start: () => pg.start(),
        accepting: () => pg.accepting(),
        serverCount: () =>
          pg.admin(async (client) =>
            Number((await client.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [APP])).rows[0].n),
          ),
      };
    }
    const my = mdb as OwnedMariadb;
    return {
      connection: 'my',
      sql: 'SELECT COUNT(*) AS n FROM seq_1_to_20000',
      stop: () => my.stop(c.stop),
      start: () => my.start(),
      accepting: () => my.accepting(),
      serverCount: () =>
        my.admin(async (client) => {
          const [rows] = await client.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE USER = ?', [PASSWORD_USER]);
          return Number((rows as { n: number }[])[0]?.n);
        }),
    };
  }

  // One test a case, named by its title (it.each would quote and shorten the title in the report).
  for (const c of CASES) {
    it(c.title, async () => {
      const result = await restartUnderLoad(scenario(c), c.downMs);
      report(c.reportAs, result.figures);
      check(result);
    }, 90_000);
  }

  it('leaks the planted password nowhere and logs no unexpected error', async () => {
    await home.stop();
    for (const out of home.outputs) scan.add('cli output', out);
    const { hits, scannedFiles } = scan.hits();
    const unexpected = unexpectedErrors(home.dir);
    report('database-restart-secrets', { scannedFiles, hits: hits.length, unexpectedErrorLines: unexpected.length });
    expect(hits).toEqual([]);
    expect(unexpected).toEqual([]);
  });
});
