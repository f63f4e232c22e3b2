/**
 * A session scoped by a context value stays in its scope through the real shim and daemon: it
 * cannot add code that would set the value to another customer's while it runs (the value is not
 * signed), and it cannot step out to a connection that applies no value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { foreignRows, RlsFixture } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('a session scoped by a context value, on PostgreSQL', () => {
  const rls = new RlsFixture({ role: 'hctx_scope', table: 'scope_orders' });
  const home = new TestHome();
  const fn = `${rls.table}_peek`;
  const agg = `${rls.table}_forge`;
  let shim: ShimHandle;

  /** The outside review's forgery: an aggregate whose step function is set_config, named without a call. */
  const forge = `CREATE AGGREGATE public.${agg}(text, boolean) (sfunc = set_config, stype = text, initcond = 'mcp.customer_id')`;
  const forgedRead = `SELECT (SELECT public.${agg}('2', true)) AS f, (SELECT string_agg(item, ',') FROM ${rls.table}) AS items, (SELECT public.${agg}('1', true)) AS g`;
  const aggregates = async (): Promise<number> =>
    (await rls.admin.query('SELECT count(*)::int AS n FROM pg_proc WHERE proname = $1', [agg])).rows[0].n;

  /** The attack: a function that reads under another customer's value and sets the caller's back. */
  const peek = `CREATE FUNCTION ${fn}() RETURNS SETOF ${rls.table} LANGUAGE plpgsql AS $$
    BEGIN
      EXECUTE 'SELECT set_' || 'config(''mcp.customer_id'', ''2'', true)';
      RETURN QUERY SELECT * FROM ${rls.table};
      EXECUTE 'SELECT set_' || 'config(''mcp.customer_id'', ''1'', true)';
    END $$`;

  beforeAll(async () => {
    await rls.setUp();
    await rls.admin.query(`GRANT CREATE ON SCHEMA public TO ${rls.role}`);
    await rls.addConnection(home, 'shop');
    await home.ok(['set', 'shop', '--allow-write']);
    await home.ok(['add', '--no-test', 'everything', PG_URL, '--no-password']);
    shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await rls.admin?.query(`DROP FUNCTION IF EXISTS ${fn}()`).catch(() => {});
    await rls.admin?.query(`DROP AGGREGATE IF EXISTS public.${agg}(text, boolean)`).catch(() => {});
    await rls.admin?.query(`REVOKE CREATE ON SCHEMA public FROM ${rls.role}`).catch(() => {});
    await rls.dispose();
  });

  it('reads its own rows', async () => {
    expect(foreignRows(await shim.call('run_query', { sql: rls.select }), 1, { rows: 5 })).toBe(0);
  });

  it('may not create a function on a writable connection whose value is not signed', async () => {
    const result = await shim.call('run_query', { sql: peek });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/CREATE FUNCTION adds or runs code the checks cannot read/);
    expect(textOf(result)).toContain('--signed-context');
    const { rows } = await rls.admin.query('SELECT count(*)::int AS n FROM pg_proc WHERE proname = $1', [fn]);
    expect(rows[0].n).toBe(0);
    const block = await shim.call('run_query', { sql: "DO $$BEGIN EXECUTE 'SELECT 1'; END$$" });
    expect(textOf(block)).toMatch(/DO adds or runs code/);
  });

  it("may not create the review's aggregate, nor one of its kind, so the forged read finds nothing", async () => {
    const created = await shim.call('run_query', { sql: forge });
    expect(created.isError).toBe(true);
    expect(textOf(created)).toMatch(/set_config/);
    // The same aggregate over a harmless step function: not on the allow list where the value is not signed.
    const harmless = await shim.call('run_query', {
      sql: forge.replace('sfunc = set_config', 'sfunc = textcat').replace('(text, boolean)', '(text)'),
    });
    expect(harmless.isError).toBe(true);
    expect(textOf(harmless)).toMatch(/CREATE AGGREGATE is not among the statements allowed where context values are not signed/);
    expect(await aggregates()).toBe(0);
    const read = await shim.call('run_query', { sql: forgedRead });
    expect(read.isError).toBe(true);
    expect(textOf(read)).not.toMatch(/secret|item/i);
  });

  it("may not create a table or an index there: every caller of the login shares the login's schema", async () => {
    const table = `${rls.table}_notes`;
    const created = await shim.call('run_query', { sql: `CREATE TABLE ${table} (id int DEFAULT 1 CHECK (id > 0))` });
    expect(created.isError).toBe(true);
    expect(textOf(created)).toContain('(rule: shared-schema)');
    const index = await shim.call('run_query', { sql: `CREATE INDEX ${table}_id ON ${rls.table} (customer_id)` });
    expect(textOf(index)).toContain('(rule: shared-schema)');
    expect((await rls.admin.query('SELECT to_regclass($1) AS t', [`public.${table}`])).rows[0].t).toBeNull();
  });

  it('may not add code once the value is signed either', async () => {
    await home.ok(['set', 'shop', '--signed-context']);
    const created = await shim.call('run_query', { sql: peek });
    expect(created.isError).toBe(true);
    expect(textOf(created)).toContain('(rule: shared-schema)');
    const { rows } = await rls.admin.query('SELECT count(*)::int AS n FROM pg_proc WHERE proname = $1', [fn]);
    expect(rows[0].n).toBe(0);
    // A function named without a call goes through the function rules signed or not.
    const forged = await shim.call('run_query', { sql: forge });
    expect(forged.isError).toBe(true);
    expect(textOf(forged)).toMatch(/set_config/);
    expect(await aggregates()).toBe(0);
  });

  it('may not step out to a connection that applies no value, by parameter or by switching', async () => {
    const direct = await shim.call('run_query', { sql: rls.select, connection: 'everything' });
    expect(direct.isError).toBe(true);
    expect(textOf(direct)).toMatch(/carries context values \(CUSTOMER_ID\) and connection "everything" declares none/);
    const use = await shim.call('use_connection', { name: 'everything' });
    expect(use.isError).toBe(true);
    expect(textOf(use)).toMatch(/^CONTEXT_INVALID: .*carries context values \(CUSTOMER_ID\) and connection "everything" declares none/);
    // The session stays on its scoped connection.
    const current = await shim.call('current_connection', {});
    expect(textOf(current)).not.toMatch(/everything/);
    const switched = await shim.call('sample_rows', { table: rls.table, connection: 'everything' });
    expect(switched.isError).toBe(true);
    expect(textOf(switched)).toMatch(/declares none/);
  });
});
