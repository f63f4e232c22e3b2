import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_spath_${process.pid}`;

/** Ends every session listed in public.victim; the person's code below calls it. */
const KILL = 'PERFORM pg_catalog.pg_terminate_backend(v.pid) FROM public.victim v';

/** A person's operator in public on two built-in types: it ends the victim's session, then answers as the built-in does. */
function operator(name: string, symbol: string, type: string): string[] {
  return [
    `CREATE FUNCTION public.op_${name}(a ${type}, b ${type}) RETURNS boolean LANGUAGE plpgsql AS $$
     BEGIN ${KILL}; RETURN a OPERATOR(pg_catalog.${symbol}) b; END $$`,
    `CREATE OPERATOR public.${symbol} (leftarg = ${type}, rightarg = ${type}, function = public.op_${name})`,
  ];
}

const TYPES: [string, string][] = [
  ['oid', 'pg_catalog.oid'],
  ['name', 'pg_catalog.name'],
  ['text', 'pg_catalog.text'],
  ['char', 'pg_catalog."char"'],
];

/**
 * A database whose search_path names public before pg_catalog (ALTER DATABASE ... SET, as a person
 * may set it for a role or a database), and whose public schema holds a person's =, <> and ~~ on
 * oid, name, text and "char", and a set_config and current_setting of the built-ins' signatures:
 * every one of them ends the victim's session, and the two settings functions answer a forged value.
 * A view over pg_authid is there for the checks to refuse.
 */
const OBJECTS = [
  'CREATE TABLE public.victim (pid int)',
  ...TYPES.flatMap(([name, type]) => [
    ...operator(`eq_${name}`, '=', type),
    ...operator(`ne_${name}`, '<>', type),
    ...(name === 'oid' || name === 'char' ? [] : operator(`like_${name}`, '~~', type)),
  ]),
  `CREATE FUNCTION public.set_config(text, text, boolean) RETURNS text LANGUAGE plpgsql AS $$
   BEGIN ${KILL}; RETURN 'forged'; END $$`,
  `CREATE FUNCTION public.current_setting(text, boolean) RETURNS text LANGUAGE plpgsql AS $$
   BEGIN ${KILL}; RETURN 'forged'; END $$`,
  `CREATE FUNCTION public.current_setting(text) RETURNS text LANGUAGE plpgsql AS $$
   BEGIN ${KILL}; RETURN 'forged'; END $$`,
  'CREATE TABLE public.orders (id int PRIMARY KEY, customer text)',
  "COMMENT ON TABLE public.orders IS 'the orders'",
  "INSERT INTO public.orders VALUES (1, 'a'), (2, 'b')",
  'CREATE VIEW public.role_names AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid',
];

describe.skipIf(!available)("hanactl's own statements on a login whose search_path puts a person's schema before pg_catalog", () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;
  let costed: ShimHandle;
  let victim: VictimSession | undefined;
  let url: URL;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await scratch.db.query(`ALTER DATABASE ${TAG} SET search_path = public, pg_catalog`);
    url = new URL(scratch.url);
    await home.ok(['add', '--no-test', '--no-password', 'spath', scratch.url, '--context', 'CUSTOMER_ID']);
    // The cost guard's EXPLAIN step on a second connection to the same database (it keeps no context names).
    await home.ok(['add', '--no-test', '--no-password', 'spcost', scratch.url]);
    await home.ok(['set', 'spcost', '--max-cost', '1000000']);
    shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '42' }, ['--connection', 'spath']);
    costed = await startShim(home.env, ['--connection', 'spcost']);
  });

  // A fresh session per call for the person's code to end: it lives only if none of it ran.
  beforeEach(async () => {
    victim = await VictimSession.open(url.toString());
    await scratch?.db.query('TRUNCATE public.victim');
    await scratch?.db.query('INSERT INTO public.victim VALUES ($1)', [victim.pid]);
  });

  afterEach(async () => {
    await victim?.end();
  });

  afterAll(async () => {
    await shim?.close();
    await costed?.close();
    await home.dispose();
    await scratch?.drop();
  });

  const victimLives = () => expect(victim?.client.query('SELECT 1 AS alive')).resolves.toMatchObject({ rows: [{ alive: 1 }] });

  it('is armed: an unqualified = on oid in a session of this database ends the victim', async () => {
    const session = new pg.Client({ connectionString: url.toString() });
    await session.connect();
    try {
      const { rows } = await session.query("SELECT pg_catalog.current_setting('search_path') AS path");
      expect(rows[0].path).toBe('public, pg_catalog');
      await session.query("SELECT 1 FROM pg_catalog.pg_class c WHERE c.oid = 'pg_catalog.pg_class'::pg_catalog.regclass");
    } finally {
      await session.end();
    }
    await expect(victim?.client.query('SELECT 1')).rejects.toThrow();
  });

  // The call sets the context value and reads it back after the statement: a forged read-back would fail it as changed.
  it('run_query answers, with the context value set and read back as the daemon set it', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT id FROM public.orders ORDER BY id' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ id: 1 }, { id: 2 }] });
    const shown = await shim.call('run_query', { sql: 'SHOW mcp.customer_id' });
    expect(shown.isError, textOf(shown)).toBeFalsy();
    expect(shown.structuredContent).toMatchObject({ rows: [{ 'mcp.customer_id': '42' }] });
    await victimLives();
  });

  it("run_query judges the agent's own current_setting by every overload of its name, the person's included", async () => {
    const result = await shim.call('run_query', { sql: "SELECT pg_catalog.current_setting('mcp.customer_id')" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: current_setting\(\) calls pg_terminate_backend\(\)/);
    await victimLives();
  });

  it('run_query under a cost limit answers, and refuses over it', async () => {
    const result = await costed.call('run_query', { sql: 'SELECT id FROM public.orders ORDER BY id' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ id: 1 }, { id: 2 }] });
    const over = await costed.call('run_query', {
      sql: 'SELECT pg_catalog.count(*) FROM public.orders a, public.orders b, public.orders c, public.orders d, public.orders e',
    });
    expect(over.isError, textOf(over)).toBe(true);
    expect(textOf(over)).toMatch(/cost/i);
    await victimLives();
  });

  it('run_query refuses a view over pg_authid through the resolve step', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT rolname FROM public.role_names' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*pg_authid/);
    await victimLives();
  });

  it('sample_rows answers an ordinary table and refuses the view over pg_authid', async () => {
    const rows = await shim.call('sample_rows', { table: 'orders', schema: 'public' });
    expect(rows.isError, textOf(rows)).toBeFalsy();
    expect(textOf(rows)).toContain('customer');
    const refused = await shim.call('sample_rows', { table: 'role_names', schema: 'public' });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/pg_authid/);
    await victimLives();
  });

  it.each([
    ['list_schemas', {}, /public/],
    ['list_schemas', { pattern: 'pub' }, /public/],
    ['list_tables', { schema: 'public' }, /orders/],
    ['list_tables', { schema: 'public', pattern: 'ord' }, /the orders/],
    ['describe_table', { table: 'orders', schema: 'public' }, /customer/],
    ['list_routines', { schema: 'public', pattern: 'op_eq' }, /op_eq_oid/],
    ['search_objects', { pattern: 'custom' }, /customer/],
    ['explain_query', { sql: 'SELECT id FROM public.orders' }, /orders/],
  ] as const)('%s %j answers', async (tool, args, shown) => {
    const result = await shim.call(tool, args);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toMatch(shown);
    await victimLives();
  });
});
