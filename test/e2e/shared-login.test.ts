/**
 * A writable connection without context names whose login also backs a connection with context
 * names, through the real shim and daemon. What it makes or replaces, the separated connection's
 * calls meet: a function swapped between such a call's check and its statement (CREATE OR
 * REPLACE, from a second session) ran unjudged, set the context value to another customer's, read
 * their rows and set it back. So that connection refuses schema changes (rule `shared-schema`),
 * on PostgreSQL and MariaDB, while rows still change; a writable connection of another login, and
 * the same connection once no connection with context names uses its login, make them.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';

const pgAvailable = await serverAvailable('postgres');
const mysqlAvailable = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;

/** Calls `sql` on `shim` and asserts it is refused by rule shared-schema, naming the shared login. */
async function refusedAsShared(shim: ShimHandle, sql: string): Promise<void> {
  const result = await shim.call('run_query', { sql });
  expect(result.isError, `${sql}: ${textOf(result)}`).toBe(true);
  expect(textOf(result)).toContain('(rule: shared-schema)');
  expect(textOf(result)).toContain('also backs a connection with context names');
}

async function answers(shim: ShimHandle, sql: string): Promise<string> {
  const result = await shim.call('run_query', { sql });
  expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
  return textOf(result);
}

describe.skipIf(!pgAvailable)('a login shared with a connection with context names, on PostgreSQL', () => {
  const home = new TestHome();
  const tag = `hanactl_shlogin_${s}`;
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  let other: PgLogin | undefined;
  let rw: ShimHandle;
  let otherRw: ShimHandle;

  beforeAll(async () => {
    login = await createPgLogin(`${tag}_agent`);
    other = await createPgLogin(`${tag}_other`);
    scratch = await scratchPgDatabase(tag, [
      'CREATE TABLE orders (customer_id int NOT NULL, item text NOT NULL)',
      "INSERT INTO orders VALUES (1, 'mine'), (2, 'hidden')",
      'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
      "CREATE POLICY by_customer ON orders USING (customer_id = nullif(current_setting('mcp.customer_id', true), '')::int)",
      `CREATE SCHEMA work AUTHORIZATION ${login.name}`,
      `CREATE SCHEMA other_work AUTHORIZATION ${other.name}`,
      'CREATE TABLE notes (x int)',
      `GRANT SELECT, INSERT ON orders, notes TO ${login.name}`,
    ]);
    const add = (name: string, who: PgLogin, flags: readonly string[]) =>
      home.ok(['add', '--no-test', name, who.url(scratch!.url), '--password-stdin', ...flags], { input: who.password });
    await add('shop', login, ['--context', 'customer_id']);
    await add('plain_rw', login, ['--allow-write']);
    await add('other_rw', other, ['--allow-write']);
    rw = await startShim(home.env, ['--connection', 'plain_rw']);
    otherRw = await startShim(home.env, ['--connection', 'other_rw']);
  });

  afterAll(async () => {
    await rw?.close();
    await otherRw?.close();
    await home.dispose();
    await scratch?.drop();
    await login?.drop();
    await other?.drop();
  });

  it('refuses making or replacing code and views, and the schema is unchanged', async () => {
    for (const sql of [
      "CREATE OR REPLACE FUNCTION work.f() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'good'; END $$",
      'CREATE VIEW work.v AS SELECT 1 AS one',
      'CREATE TABLE work.t (x int)',
      'ALTER SCHEMA work RENAME TO work2',
      "DO $$ BEGIN EXECUTE 'CREATE TABLE work.t2 (x int)'; END $$",
      'SELECT 1 AS one INTO work.t3',
      // EXPLAIN ANALYZE runs the statement it wraps.
      'EXPLAIN ANALYZE CREATE TABLE work.t4 AS SELECT 1 AS one',
      'EXPLAIN (ANALYZE) CREATE MATERIALIZED VIEW work.mv AS SELECT 1 AS one',
    ])
      await refusedAsShared(rw, sql);
    const { rows } = await scratch!.db.query(
      "SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'work'",
    );
    expect(rows[0].n).toBe(0);
    const { rows: functions } = await scratch!.db.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'f'");
    expect(functions[0].n).toBe(0);
  });

  it('refuses them on the same user through another port or host, as a pooler or a socket would reach the server', async () => {
    const url = new URL(login!.url(scratch!.url));
    url.host = 'localhost:16432';
    await home.ok(['add', '--no-test', 'pooled_rw', url.toString(), '--password-stdin', '--allow-write'], { input: login!.password });
    const pooled = await startShim(home.env, ['--connection', 'pooled_rw']);
    try {
      await refusedAsShared(pooled, "CREATE OR REPLACE FUNCTION work.f() RETURNS text LANGUAGE sql AS $$ SELECT 'x' $$");
    } finally {
      await pooled.close();
      await home.ok(['remove', 'pooled_rw']);
    }
  });

  it('still changes rows, and another login makes schema changes', async () => {
    await answers(rw, 'INSERT INTO notes VALUES (1)');
    await answers(otherRw, 'CREATE TABLE other_work.t (x int)');
    await answers(otherRw, "CREATE OR REPLACE FUNCTION other_work.f() RETURNS text LANGUAGE sql AS $$ SELECT 'ok' $$");
  });

  it('warns on test that one login backs connections with and without context names', async () => {
    const shop = await home.ok(['test', 'shop']);
    expect(shop.stdout + shop.stderr).toMatch(/The same login backs "shop", which declares context names, and "plain_rw", which does not/);
    const other = await home.ok(['test', 'other_rw']);
    expect(other.stdout + other.stderr).not.toMatch(/The same login backs/);
  });

  it('makes schema changes again once no connection with context names uses the login', async () => {
    await home.ok(['remove', 'shop']);
    await answers(rw, 'CREATE TABLE work.t (x int)');
    await home.ok(['add', '--no-test', 'shop', login!.url(scratch!.url), '--password-stdin', '--context', 'customer_id'], {
      input: login!.password,
    });
    await refusedAsShared(rw, 'DROP TABLE work.t');
  });
});

describe.skipIf(!mysqlAvailable)('a login shared with a connection with context names, on MariaDB', () => {
  const home = new TestHome();
  const login = new MariadbLogin(`shl_${s}`);
  const table = `shl_t_${s}`;
  let root: mysql.Connection;
  let rw: ShimHandle;

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE ${table} (id INT) ENGINE=Aria`);
    await login.create(root, [
      `SELECT, INSERT, CREATE, CREATE VIEW, CREATE ROUTINE, ALTER ROUTINE, DROP ON ${MYSQL_TEST_DB}.*`,
    ]);
    const add = (name: string, flags: readonly string[]) =>
      home.ok(['add', '--no-test', name, login.url({ withPassword: false }), '--password-stdin', ...flags], { input: login.password });
    await add('shop', ['--context', 'CUSTOMER_ID']);
    await add('plain_rw', ['--allow-write']);
    rw = await startShim(home.env, ['--connection', 'plain_rw']);
  });

  afterAll(async () => {
    await rw?.close();
    await home.dispose();
    for (const sql of [`DROP TABLE IF EXISTS ${table}`, `DROP FUNCTION IF EXISTS shl_f_${s}`, `DROP VIEW IF EXISTS shl_v_${s}`])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  it('refuses making or replacing routines and views, and none exists; rows still change', async () => {
    for (const sql of [
      `CREATE OR REPLACE FUNCTION shl_f_${s}() RETURNS INT DETERMINISTIC RETURN 1`,
      `CREATE OR REPLACE VIEW shl_v_${s} AS SELECT 1 AS one`,
      `/*!100000CREATE*/ VIEW shl_v_${s} AS SELECT 1 AS one`,
    ])
      await refusedAsShared(rw, sql);
    const [found] = (await root.query(
      `SELECT COUNT(*) AS n FROM information_schema.ROUTINES WHERE ROUTINE_NAME = 'shl_f_${s}' UNION ALL SELECT COUNT(*) FROM information_schema.VIEWS WHERE TABLE_NAME = 'shl_v_${s}'`,
    )) as unknown as [{ n: number }[]];
    expect(found.map((row) => Number(row.n))).toEqual([0, 0]);
    await answers(rw, `INSERT INTO ${table} VALUES (1)`);
  });
});

