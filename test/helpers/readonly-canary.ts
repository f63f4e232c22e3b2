/**
 * The canary databases the read-only corpus tests run against (`test/e2e/readonly-corpus-shim.test.ts`,
 * `test/e2e/readonly-layers.test.ts`): per engine, a dedicated schema/database/file with known
 * contents and how to read its state, plus the small helpers both tests use around the corpus.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { PolicyCase } from '../fixtures/policy-corpus.js';
import { MYSQL_URL, PG_URL, serverAvailable } from './engines.js';

export type Dialect = 'sqlite' | 'postgres' | 'mysql';

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

/** Which engines answer; see `serverAvailable` (in CI an unreachable server fails instead). */
export const available: Record<Dialect, boolean> = {
  sqlite: true,
  postgres: await serverAvailable('postgres'),
  mysql: await serverAvailable('mysql'),
};

/** A corpus statement as a short test name. */
export const label = (sql: string): string => {
  const one = JSON.stringify(sql);
  return one.length > 70 ? `${one.slice(0, 67)}..." (${sql.length} chars)` : one;
};

/** The host paths under /tmp the corpus names (`INTO OUTFILE '/tmp/x'`, `ATTACH '/tmp/x.db'`). */
export const corpusPaths = (cases: readonly PolicyCase[]): string[] => [
  ...new Set(cases.flatMap((c) => [...c.sql.matchAll(/'(\/tmp\/[^']*)'/g)].map((m) => m[1] as string))),
];

/** A file's size and modification time, or `absent`: compared before and after a statement. */
export const fileState = (path: string): string => {
  try {
    const s = statSync(path);
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return 'absent';
  }
};

/** One engine's canary: a dedicated schema/database/file with known contents, and how to read its state. */
export interface Canary {
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

/** The tables every canary has (the state covers each), with their row counts at setup. */
const ROWS = { t: 3, u: 2, a: 2, b: 2, c: 1, updates: 2, orders: 5 } as const;

async function postgresCanary(name: string): Promise<Canary> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  const s = name;
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

async function mysqlCanary(name: string): Promise<Canary> {
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
  await bootstrap.query(`CREATE DATABASE ${name}`);
  await bootstrap.end();
  const admin = await connect(name);
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
  url.pathname = `/${name}`;
  const rows = async (sql: string, params: unknown[] = []) => (await admin.query(sql, params))[0] as Record<string, unknown>[];
  return {
    url: url.toString(),
    state: async () => ({
      tables: await rows(
        'SELECT TABLE_name, TABLE_TYPE, TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_name',
        [name],
      ),
      columns: await rows(
        'SELECT TABLE_name, COLUMN_name, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? ORDER BY TABLE_name, ORDINAL_POSITION',
        [name],
      ),
      routines: await rows(
        'SELECT ROUTINE_name, ROUTINE_TYPE FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ? ORDER BY ROUTINE_name',
        [name],
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
        [name],
      ),
    dispose: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name}`);
      await admin.end();
    },
  };
}

async function sqliteCanary(_name: string, tmpPrefix: string): Promise<Canary> {
  const dir = mkdtempSync(join(tmpdir(), tmpPrefix));
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

const CANARIES: Record<Dialect, (name: string, tmpPrefix: string) => Promise<Canary>> = {
  sqlite: sqliteCanary,
  postgres: postgresCanary,
  mysql: mysqlCanary,
};

/**
 * Sets up `dialect`'s canary: the PostgreSQL schema or MariaDB database `name` (also the
 * PostgreSQL application name), or an SQLite file in a fresh temp folder named from `tmpPrefix`.
 */
export const openCanary = (dialect: Dialect, name: string, tmpPrefix: string): Promise<Canary> => CANARIES[dialect](name, tmpPrefix);
