/**
 * PostgreSQL functions that run SQL text, act outside the transaction or read server files, and
 * views that read server files, sent by an agent through the real shim and daemon: refused with a
 * message naming the function, nothing of it runs, and the caller sees no other caller's rows.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { foreignRows, RlsFixture } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const rls = new RlsFixture({ role: 'hpgfn_rls', table: 'pgfn_orders' });

/** ts_rewrite(tsquery, text) runs `sql` (which must return two tsquery columns). */
const tsRewrite = (sql: string) => `ts_rewrite('a'::tsquery, $q$${sql}$q$)`;

describe.skipIf(!available)('PostgreSQL functions and views refused through the shim', () => {
  const home = new TestHome();
  const db = `hpgfn_${process.pid}_${randomBytes(3).toString('hex')}`;
  const u = new URL(PG_URL);
  let admin: pg.Client;
  let inDb: pg.Client;
  let customer: ShimHandle;
  let superuser: ShimHandle;
  let writer: ShimHandle;

  beforeAll(async () => {
    await rls.setUp();
    await rls.addConnection(home, 'shop');
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    inDb = new pg.Client({ connectionString: `postgres://${u.username}@${u.host}/${db}` });
    await inDb.connect();
    await inDb.query('CREATE EXTENSION dblink');
    await inDb.query('CREATE EXTENSION tablefunc');
    await inDb.query('CREATE TABLE keep (id int PRIMARY KEY, parent int)');
    await inDb.query('INSERT INTO keep VALUES (1, NULL), (2, 1)');
    // A superuser connection marked read-only (the default), as in the review.
    await home.ok(['add', '--no-test', 'su', `postgres://${u.username}@${u.host}/${db}`, '--no-password']);
    customer = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    superuser = await startShim(home.env, ['--connection', 'su']);
    await home.ok(['add', '--no-test', 'suw', `postgres://${u.username}@${u.host}/${db}`, '--no-password', '--allow-write']);
    writer = await startShim(home.env, ['--connection', 'suw']);
  });

  afterAll(async () => {
    await customer?.close();
    await superuser?.close();
    await writer?.close();
    await home.dispose();
    await inDb?.end().catch(() => {});
    await admin?.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
    await admin?.end().catch(() => {});
    await rls.dispose();
  });

  it("ts_rewrite's SQL text cannot switch to another customer and back inside one statement", async () => {
    const sql = `SELECT ${tsRewrite("SELECT set_config('mcp.customer_id','2',true)::tsquery, 'a'::tsquery")} AS x,
      (SELECT string_agg(item, ',') FROM ${rls.table}) AS items,
      ${tsRewrite("SELECT set_config('mcp.customer_id','1',true)::tsquery, 'a'::tsquery")} AS y`;
    const result = await customer.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/ts_rewrite\(\) runs the SQL text it is given, and that text is refused/);
    expect(textOf(result)).not.toMatch(/item-2-/);
    // The caller still sees exactly its own rows.
    const own = await customer.call('run_query', { sql: rls.select });
    expect(foreignRows(own, 1)).toBe(0);
    expect(textOf(own)).toMatch(/item-1-1/);
  });

  it('ts_rewrite cannot carry a dblink_exec DELETE on a read-only superuser connection', async () => {
    const conn = `host=${u.hostname} port=${u.port || 5432} dbname=${db} user=${u.username}`;
    const result = await superuser.call('run_query', {
      sql: `SELECT ${tsRewrite(`SELECT dblink_exec('${conn}', 'DELETE FROM keep')::tsquery, 'a'::tsquery`)}`,
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/ts_rewrite\(\)/);
    expect((await inDb.query('SELECT count(*)::int AS n FROM keep')).rows[0].n).toBe(2);
  });

  it.each([
    [
      "SELECT * FROM connectby('keep', 'id', 'parent', '1', 0) AS t(id int, parent int, level int)",
      /connectby\(\) builds SQL from its arguments/,
    ],
    ['SELECT pg_stat_reset()', /pg_stat_reset\(\) changes the server or other sessions/],
    ["SELECT * FROM pg_catalog.pg_create_physical_replication_slot('hpgfn_slot')", /pg_create_physical_replication_slot\(\)/],
    ['SELECT pg_log_backend_memory_contexts(pg_backend_pid())', /pg_log_backend_memory_contexts\(\)/],
    ['SELECT setseed(0.5)', /setseed\(\) changes the session beyond the call/],
    ["SELECT pg_read_file('PG_VERSION')", /pg_read_file\(\) reads or writes files on the database host/],
    ['SELECT * FROM pg_file_settings', /pg_file_settings reads files on the database host/],
    ['SELECT * FROM pg_catalog.pg_hba_file_rules', /pg_hba_file_rules reads files on the database host/],
    ["SELECT table_to_xml('pg_ident_file_mappings', true, false, '')", /pg_ident_file_mappings reads files on the database host/],
  ])('refuses %s, naming what it does', async (sql, message) => {
    const result = await superuser.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('nothing of the refused calls reached the server: no replication slot, the rows intact', async () => {
    expect((await admin.query("SELECT count(*)::int AS n FROM pg_replication_slots WHERE slot_name = 'hpgfn_slot'")).rows[0].n).toBe(0);
    expect((await inDb.query('SELECT count(*)::int AS n FROM keep')).rows[0].n).toBe(2);
  });

  it('functions reviewed as reads still run: random(), crosstab with plain SQL text', async () => {
    expect((await superuser.call('run_query', { sql: 'SELECT random() < 1 AS ok' })).isError).toBeFalsy();
    const crosstab = await superuser.call('run_query', {
      sql: "SELECT * FROM crosstab('SELECT id, parent, id FROM keep ORDER BY 1', 'SELECT 1') AS ct(id int, p1 int)",
    });
    expect(crosstab.isError, textOf(crosstab)).toBeFalsy();
  });

  it.each([
    [
      "CREATE FUNCTION public.peek() RETURNS text LANGUAGE sql SET mcp.customer_id = '2' AS $$ SELECT string_agg(id::text, ',') FROM keep $$",
      /sets mcp\.customer_id, a context value, which only hanactl sets/,
    ],
    // Scoped to this test's database and role, so that even a regression leaves nothing behind.
    [`ALTER ROLE ${rls.role} IN DATABASE ${db} SET "mcp.customer_id" = '2'`, /sets mcp\.customer_id, a context value/],
    [`ALTER DATABASE ${db} SET mcp.customer_id = '2'`, /sets mcp\.customer_id, a context value/],
    ["UPDATE \"pg_settings\" SET setting = 'x' WHERE name = 'application_name'", /UPDATE pg_settings changes the session/],
  ])('a writable connection refuses %s', async (sql, message) => {
    const result = await writer.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('no function, role or database setting fixing a context value reached the server', async () => {
    expect((await inDb.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'peek'")).rows[0].n).toBe(0);
    const settings = await admin.query("SELECT count(*)::int AS n FROM pg_db_role_setting, unnest(setconfig) c WHERE c LIKE 'mcp.%'");
    expect(settings.rows[0].n).toBe(0);
  });

  it('a function with other settings is still created on the writable connection', async () => {
    const result = await writer.call('run_query', {
      sql: "CREATE FUNCTION public.plain() RETURNS int LANGUAGE sql SET search_path = pg_catalog AS 'SELECT 1'",
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect((await inDb.query("SELECT count(*)::int AS n FROM pg_proc WHERE proname = 'plain'")).rows[0].n).toBe(1);
  });

  it("text PostgreSQL 15 reads but the policy's parser cannot is refused, naming the parser's error", async () => {
    const result = await superuser.call('run_query', { sql: 'SELECT * FROM keep system_user' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/PostgreSQL's parser could not read this statement: syntax error at or near "system_user"/);
  });
});
