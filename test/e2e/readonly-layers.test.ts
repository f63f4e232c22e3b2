/**
 * Layers 2 and 3 of read-only safety on their own: every statement the validator refuses is sent
 * to the real engine as a read call, with the validator bypassed through the daemon's internal
 * interface (`QueryService` built in-process with a policy that calls everything a read; no flag,
 * environment variable or argument can do this). After each statement the database must be as it
 * was at setup: tables, columns, routines, row counts and contents, the canary sequence. Effects
 * outside the data (files on the host, session state a later caller inherits, locks) are observed
 * too; the ones layers 2 and 3 are known not to stop are listed in KNOWN_GAPS with their reason,
 * and any other fails the test.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS } from '../../daemon/pools/pool.js';
import { PoolManager } from '../../daemon/pools/pool-manager.js';
import { QueryService } from '../../daemon/queries/query-service.js';
import { ConnectionService } from '../../daemon/registry/connection-service.js';
import { Registry } from '../../daemon/registry/registry.js';
import { isHanactlError } from '../../shared/errors.js';
import { POLICY_CORPUS, type PolicyCase } from '../fixtures/policy-corpus.js';
import { available, type Canary, corpusPaths, type Dialect, fileState, label, openCanary } from '../helpers/readonly-canary.js';

/** Unique per run: the PostgreSQL schema, the MariaDB database and the application name. */
const NAME = `hanactl_ro_b_${process.pid}_${randomBytes(3).toString('hex')}`;
/** Host paths the corpus names (`'/tmp/x'`) are rewritten under this prefix, so a write is seen and never clobbers a shared file. */
const HOST_PREFIX = `/tmp/${NAME}-`;
/** Short, so the sleeping statements end quickly (they are refused for that by the validator). */
const TIMEOUT_MS = 1500;

/**
 * Statements not sent to the engine, with the reason. Each was checked by hand; running it here
 * would reach beyond this test's schema on a shared server.
 */
const NOT_RUN: Partial<Record<Dialect, Record<string, string>>> = {
  mysql: {
    'FLUSH TABLES WITH READ LOCK':
      'runs inside START TRANSACTION READ ONLY on a tx_read_only session (checked by hand on MariaDB 10.11) and would hold a global read lock, blocking every writer on the shared server until the pooled session ends',
  },
};

/**
 * Effects outside the data that layers 2 and 3 do not stop for a privileged user; each is a
 * finding (the validator is the only layer against them). Keyed by dialect, then corpus SQL.
 */
const KNOWN_GAPS: Partial<Record<Dialect, Record<string, string>>> = {
  sqlite: {
    "PRAGMA key = 'x'":
      'sets a cipher key on the open connection; every later call on that pooled connection fails with "file is not a database", and the pool keeps it because a statement error leaves a connection it deems healthy',
  },
  postgres: {
    "COPY t TO PROGRAM 'curl http://example.com'":
      'starts a program on the database host: COPY TO is a read, so a read-only transaction allows it, and the superuser may run programs',
  },
  mysql: {
    "SELECT * FROM t INTO OUTFILE '/tmp/x'":
      'writes a file on the database host: a read-only transaction does not cover INTO OUTFILE, and root has FILE with secure_file_priv unset',
    "SELECT a INTO DUMPFILE '/tmp/x' FROM t":
      'creates the file on the database host before failing with "Result consisted of more than one row"',
  },
};

const casesFor = (dialect: Dialect): PolicyCase[] =>
  POLICY_CORPUS.filter((c) => c.verdict === 'refuse' && (c.dialects === 'all' || c.dialects.includes(dialect)));

/** Where a corpus host path is rewritten to for this run. */
const rewritten = (path: string): string => `${HOST_PREFIX}${path.slice('/tmp/'.length)}`;

/** How the engine answered a statement, for the report. */
function outcomeOf(err: unknown): string {
  if (err === undefined) return 'ran';
  if (!isHanactlError(err)) return `INTERNAL ${String(err)}`;
  const d = err.details;
  const code = d.sqlState ?? d.nativeCode ?? d.rule ?? '';
  return `${err.code} ${code} ${err.message.split('\n')[0]?.slice(0, 90)}`.replace(/\s+/g, ' ');
}

const dir = mkdtempSync(join(tmpdir(), 'hanactl-ro-layers-'));
const registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));

afterAll(() => {
  registry.close();
  rmSync(dir, { recursive: true, force: true });
});

for (const dialect of ['sqlite', 'postgres', 'mysql'] as const) {
  describe.skipIf(!available[dialect])(`layers 2 and 3 alone on ${dialect}: every refused statement, sent as a read call`, () => {
    const cases = casesFor(dialect);
    const paths = corpusPaths(cases);
    const watched = [...paths, ...paths.map(rewritten)];
    const connection = `ro-${dialect}`;
    const outcomes = new Map<string, string[]>();
    const effects: { sql: string; effect: string }[] = [];
    const notRun: string[] = [];
    const changed: string[] = [];
    let canary: Canary;
    let pools: PoolManager;
    let queries: QueryService;
    let baseline: unknown;
    let baselineFiles: string[];
    let baselineSession: Record<string, unknown>;

    const probe = async () => (await queries.runTrusted({ connection, sql: canary.probeSql })).rows[0] ?? {};

    beforeAll(async () => {
      canary = await openCanary(dialect, NAME, 'hanactl-ro-b-');
      pools = new PoolManager({ pool: DEFAULT_POOL_OPTIONS, connectTimeoutMs: 5000, maxPools: 2, loadDriverFactory });
      const connections = new ConnectionService(registry, pools);
      const record = await connections.add({ name: connection, url: canary.url });
      expect(record.allowWrite).toBe(false);
      queries = new QueryService({
        resolve: (n) => connections.resolve(n),
        poolFor: (r) => pools.poolFor(r),
        // The validator bypassed: every statement reaches the engine as a read call.
        policy: { check: () => 'read' },
      });
      baseline = await canary.state();
      baselineFiles = watched.map(fileState);
      baselineSession = await probe();
    });

    afterAll(async () => {
      await pools?.closeAll();
      await canary?.dispose();
      for (const path of paths.map(rewritten)) rmSync(path, { force: true });
    });

    it.for(cases.map((c) => [label(c.sql), c] as const))('leaves the database unchanged after %s', async ([name, c], ctx) => {
      const skipBecause = NOT_RUN[dialect]?.[c.sql];
      const victim = /^(?:KILL |SELECT pg_terminate_backend\()(\d+)/.exec(c.sql)?.[1];
      if (skipBecause || (victim && (await canary.liveSession(Number(victim))))) {
        notRun.push(`${name}: ${skipBecause ?? `a live session has id ${victim}`}`);
        ctx.skip();
        return;
      }
      const sql = c.sql.replaceAll("'/tmp/", `'${HOST_PREFIX}`);
      let failure: unknown;
      try {
        await queries.run({ connection, sql, timeoutMs: TIMEOUT_MS });
      } catch (err) {
        failure = err;
      }
      const outcome = outcomeOf(failure);
      outcomes.set(outcome, [...(outcomes.get(outcome) ?? []), name]);

      const state = await canary.state();
      if (!isDeepStrictEqual(state, baseline)) changed.push(name);
      expect(state, `the database changed after ${name} (${outcome})`).toEqual(baseline);

      const seen: string[] = [];
      // A program leaves no trace this test can see; the engine's answer says whether it started.
      if (/\bTO PROGRAM\b/i.test(c.sql) && (outcome === 'ran' || outcome.includes('program "'))) {
        seen.push(`program started on the database host (${outcome})`);
      }
      watched.forEach((path, i) => {
        if (fileState(path) !== baselineFiles[i]) seen.push(`file ${path}`);
      });
      for (const path of paths.map(rewritten)) rmSync(path, { force: true });
      try {
        const session = await probe();
        for (const [key, value] of Object.entries(session)) {
          if (value !== baselineSession[key]) seen.push(`session ${key}=${JSON.stringify(value)}`);
        }
      } catch (err) {
        seen.push(`session unusable for the next borrower: ${outcomeOf(err)}`);
      }
      const locks = await canary.heldLocks();
      if (locks.length > 0) seen.push(`locks ${JSON.stringify(locks)}`);
      if (seen.length > 0) {
        for (const effect of seen) effects.push({ sql: c.sql, effect });
        // The next statement starts on a fresh session, so each effect is charged to its own statement.
        await pools.closeAll();
      }
      const known = KNOWN_GAPS[dialect]?.[c.sql];
      expect(known ? [] : seen, `${name} (${outcome}) reached beyond the rolled-back transaction`).toEqual([]);
    });

    it('changed nothing, holds no locks and leaves no host file behind after the run', async () => {
      const ran = cases.length - notRun.length;
      const unseen = Object.keys(KNOWN_GAPS[dialect] ?? {}).filter((sql) => !effects.some((e) => e.sql === sql));
      const lines = [...outcomes]
        .sort((x, y) => y[1].length - x[1].length)
        .map(([o, names]) => `  ${names.length} × ${o}\n      ${names.join('\n      ')}`);
      console.log(
        [
          `[${dialect}] layers 2+3: ${ran} refused statements sent to the engine as reads, ${notRun.length} not run; database changed after ${changed.length}.`,
          ...notRun.map((n) => `  not run: ${n}`),
          ...unseen.map((sql) => `  known gap no longer observed (remove it from KNOWN_GAPS): ${label(sql)}`),
          ...effects.map(
            (e) => `  effect beyond the data${KNOWN_GAPS[dialect]?.[e.sql] ? ' (known gap)' : ''}: ${label(e.sql)} → ${e.effect}`,
          ),
          ...lines,
        ].join('\n'),
      );
      expect(changed).toEqual([]);
      expect(await canary.heldLocks()).toEqual([]);
      expect(watched.map(fileState)).toEqual(baselineFiles);
    });
  });
}
