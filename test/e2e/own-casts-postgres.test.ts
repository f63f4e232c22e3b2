/**
 * hanactl's own checks on PostgreSQL hold in a database where a superuser added a cast between
 * built-in types that swallows what it converts. Such a pg_cast row replaces the server's I/O
 * conversion for its pair (text to int4, to oid, to int8): the resolve step's and the context
 * checks' forced error, and the walk's reading of the numbers in a stored tree, would then come
 * back as a value. Through the real shim and daemon, each check still refuses: a person's helper
 * that sets the context value, a SECURITY DEFINER function, a view that reads other sessions'
 * statements, and, on a writable superuser connection, an agent that made the cast itself and then
 * a function handing table_to_xml a relation chosen only when it runs.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY, RlsOwnerDatabase } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** A cast from text to `target` that returns NULL for any text its type does not take. */
const swallowingCast = (target: 'int4' | 'oid' | 'int8'): string[] => [
  `CREATE FUNCTION public.safe_${target}(t text) RETURNS pg_catalog.${target} LANGUAGE plpgsql IMMUTABLE AS $$
     BEGIN RETURN pg_catalog.${target}in(pg_catalog.textout(t)); EXCEPTION WHEN others THEN RETURN NULL; END $$`,
  `CREATE CAST (text AS pg_catalog.${target}) WITH FUNCTION public.safe_${target}(text)`,
];

const OWNED = [
  'CREATE TABLE orders (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO orders SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g",
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON orders USING (${RLS_POLICY})`,
  // A person's helper that sets the context value, and a SECURITY DEFINER function.
  "CREATE FUNCTION public.forge() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN set_config('mcp.customer_id', '2', true); END $$",
  'CREATE FUNCTION public.peek() RETURNS text LANGUAGE sql SECURITY DEFINER AS $$ SELECT current_user::text $$',
  'CREATE VIEW public.acts_v AS SELECT query FROM pg_catalog.pg_stat_activity',
  // A relation named by a constant in a view's stored tree, read whole by table_to_xml.
  "CREATE VIEW public.xml_v AS SELECT pg_catalog.table_to_xml('public.acts_v'::regclass, true, false, '')::text AS d",
];

const refused = (result: CallToolResult): void => {
  expect(result.isError, textOf(result)).toBe(true);
  expect(textOf(result)).toMatch(/Refused|CONTEXT_CHANGED|changed/);
  expect(textOf(result)).not.toMatch(/item-2-/);
};

for (const target of ['int4', 'oid', 'int8'] as const)
  describe.skipIf(!available)(`hanactl's checks with a person's (text AS ${target}) cast that swallows errors`, () => {
    const home = new TestHome();
    const db = new RlsOwnerDatabase(`hanactl_owncasts_${target}`);
    let shim: ShimHandle;

    beforeAll(async () => {
      await db.setUp(OWNED, [`GRANT SELECT ON orders, acts_v, xml_v TO ${db.agent}`, ...swallowingCast(target)]);
      await db.addConnection(home, 'shop', ['--context', 'customer_id']);
      shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    }, 120_000);

    afterAll(async () => {
      await shim?.close();
      await home.dispose();
      await db.dispose();
    }, 120_000);

    it("still answers a plain read with the caller's rows only", async () => {
      const result = await shim.call('run_query', { sql: 'SELECT customer_id, item FROM orders' });
      expect(result.isError, textOf(result)).toBeFalsy();
      const rows = (result.structuredContent as { rows: { customer_id: number }[] }).rows;
      expect(rows).toHaveLength(5);
      expect(rows.every((r) => r.customer_id === 1)).toBe(true);
    });

    it('refuses the forgery through the helper that sets the context value', async () => {
      refused(await shim.call('run_query', { sql: 'SELECT public.forge(), customer_id, item FROM orders' }));
      refused(await shim.call('run_query', { sql: 'SELECT customer_id, item FROM orders WHERE public.forge() IS NOT NULL' }));
    });

    it("refuses a SECURITY DEFINER function and a view over other sessions' statements", async () => {
      refused(await shim.call('run_query', { sql: 'SELECT public.peek()' }));
      refused(await shim.call('run_query', { sql: 'SELECT query FROM public.acts_v' }));
      refused(await shim.call('run_query', { sql: 'SELECT d FROM public.xml_v' }));
    });
  });

describe.skipIf(!available)('a writable superuser connection whose agent makes the cast itself', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(`hanactl_owncasts_su_${process.pid}`);
    await home.ok(['add', '--no-test', '--no-password', '--allow-write', 'su', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'su']);
  }, 60_000);

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  }, 120_000);

  it('refuses its function that hands table_to_xml a relation built at run time', async () => {
    for (const sql of swallowingCast('int4')) await shim.call('run_query', { sql });
    await shim.call('run_query', {
      sql: "CREATE FUNCTION public.dump() RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.table_to_xml(('pg_auth' || 'id')::regclass, true, false, '')::text $$",
    });
    const result = await shim.call('run_query', { sql: 'SELECT pg_catalog.translate(public.dump(), $$ABC$$, $$abc$$) AS d' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused/);
    expect(textOf(result)).not.toMatch(/SCRAM|rolpassword/i);
  });
});
