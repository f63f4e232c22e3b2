/**
 * The read-only corpus end to end, through the real shim: the SDK Client over stdio drives
 * `hanactl mcp`, which asks a real daemon, which runs each statement on a read-only connection
 * registered with `hanactl add`. A refused statement must come back as an `isError` result that
 * names its rule; a legitimate read must not be refused by the validator (it may still fail on
 * the engine: those failures are counted apart). After every statement the canary database must
 * be as it was at setup, and no file may appear at a path the corpus names.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Param } from '../../shared/schemas.js';
import { POLICY_CORPUS, type PolicyCase } from '../fixtures/policy-corpus.js';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

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
const NAME = `hanactl_ro_a_${process.pid}_${randomBytes(3).toString('hex')}`;

/** Values for the placeholders, so the reads that bind parameters really run. */
const PARAMS: Partial<Record<Dialect, Record<string, Param[]>>> = {
  sqlite: { 'SELECT * FROM t WHERE a = ?': [1] },
  mysql: { 'SELECT * FROM t WHERE a = ?': [1] },
  postgres: { 'SELECT $1::text, $2': ['x', 2], 'SELECT * FROM t WHERE id = ANY($1)': ['{1,2}'] },
};

const casesFor = (dialect: Dialect): PolicyCase[] => POLICY_CORPUS.filter((c) => c.dialects === 'all' || c.dialects.includes(dialect));

const label = (sql: string): string => {
  const one = JSON.stringify(sql);
  return one.length > 70 ? `${one.slice(0, 67)}..." (${sql.length} chars)` : one;
};

/** The host paths under /tmp the corpus names (`INTO OUTFILE '/tmp/x'`, `ATTACH '/tmp/x.db'`). */
const corpusPaths = (cases: readonly PolicyCase[]): string[] => [
  ...new Set(cases.flatMap((c) => [...c.sql.matchAll(/'(\/tmp\/[^']*)'/g)].map((m) => m[1] as string))),
];
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
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-ro-a-'));
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
    heldLocks: async () => [],
    dispose: async () => {
      reader.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const CANARIES: Record<Dialect, () => Promise<Canary>> = { sqlite: sqliteCanary, postgres: postgresCanary, mysql: mysqlCanary };

/** One tool call; a protocol fault (thrown) reads like an `isError` result. */
async function runQuery(shim: ShimHandle, sql: string, params: Param[] | undefined): Promise<{ isError: boolean; text: string }> {
  try {
    const result: CallToolResult = await shim.call('run_query', { sql, ...(params ? { params } : {}) });
    return { isError: result.isError === true, text: textOf(result) };
  } catch (err) {
    return { isError: true, text: `(thrown) ${err instanceof Error ? err.message : String(err)}` };
  }
}

const home = new TestHome();

afterAll(async () => {
  await home.dispose();
});

for (const dialect of ['sqlite', 'postgres', 'mysql'] as const) {
  describe.skipIf(!available[dialect])(`the corpus through the shim on a read-only ${dialect} connection`, () => {
    const cases = casesFor(dialect);
    const paths = corpusPaths(cases);
    const connection = `ro-${dialect}`;
    const tally = {
      refused: 0,
      namedRule: 0,
      ran: 0,
      falselyRefused: [] as string[],
      engineFailures: new Map<string, string[]>(),
      changed: [] as string[],
    };
    let canary: Canary;
    let shim: ShimHandle;
    let baseline: unknown;
    let baselineFiles: string[];

    beforeAll(async () => {
      canary = await CANARIES[dialect]();
      // A declared context value, as a deployment would pass one, so `current_setting('mcp.customer_id')` reads it.
      const added = await home.ok(['add', connection, canary.url, '--no-password', '--context', 'CUSTOMER_ID', '--json']);
      expect(JSON.parse(added.stdout)).toMatchObject({ name: connection, allowWrite: false });
      shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '42' }, ['--connection', connection]);
      baseline = await canary.state();
      baselineFiles = paths.map(fileState);
    });

    afterAll(async () => {
      await shim?.close();
      // Closes the daemon's pool before the schema or database goes.
      await home.run(['remove', connection]);
      await canary?.dispose();
    });

    it.for(cases.map((c) => [label(c.sql), c] as const))('%s', async ([name, c]) => {
      const { isError, text } = await runQuery(shim, c.sql, PARAMS[dialect]?.[c.sql]);
      const firstLine = text.split('\n')[0] ?? '';
      if (c.verdict === 'refuse') {
        tally.refused++;
        expect(isError, `${name} was not refused: ${firstLine}`).toBe(true);
        if (c.sql === '') {
          // The tool's input schema (sql: at least 1 character) answers before the validator, without a rule.
          expect(text).toMatch(/Input validation error.* at sql$/);
        } else {
          expect(text).toMatch(/^STATEMENT_REFUSED: Refused: /);
          expect(text).toContain(`(rule: ${c.rule})`);
          tally.namedRule++;
        }
      } else if (!isError) {
        tally.ran++;
      } else if (text.startsWith('STATEMENT_REFUSED') && !text.includes('(rule: engine-read-only)')) {
        tally.falselyRefused.push(`${name}: ${firstLine}`);
        expect.soft(firstLine, `the validator refused the legitimate read ${name}`).toBe('');
      } else {
        tally.engineFailures.set(firstLine, [...(tally.engineFailures.get(firstLine) ?? []), name]);
      }

      const state = await canary.state();
      if (!isDeepStrictEqual(state, baseline)) tally.changed.push(name);
      expect(state, `the database changed after ${name}`).toEqual(baseline);
      expect(paths.map(fileState), `a file appeared or changed after ${name}`).toEqual(baselineFiles);
    });

    it('falsely refuses no legitimate read, changes nothing and holds no locks', async () => {
      const allowed = cases.filter((c) => c.verdict === 'allow').length;
      const failed = [...tally.engineFailures.values()].reduce((n, names) => n + names.length, 0);
      const groups = [...tally.engineFailures]
        .sort((x, y) => y[1].length - x[1].length)
        .map(([error, names]) => `  ${names.length} × ${error}\n      ${names.join('\n      ')}`);
      console.log(
        [
          `[${dialect}] shim: ${tally.refused} refused statements refused (${tally.namedRule} naming their rule); ${allowed} reads: ${tally.ran} ran, ` +
            `${tally.falselyRefused.length} falsely refused, ${failed} failed on the engine; database changed after ${tally.changed.length}.`,
          ...tally.falselyRefused.map((f) => `  FALSELY REFUSED ${f}`),
          ...groups,
        ].join('\n'),
      );
      expect(tally.falselyRefused).toEqual([]);
      expect(tally.changed).toEqual([]);
      expect(await canary.heldLocks()).toEqual([]);
    });
  });
}
