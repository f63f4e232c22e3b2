import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFunctionBody } from '../../daemon/engines/postgres/postgres-signed-context.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_resolve_${process.pid}`;

/**
 * run_query on PostgreSQL refuses what a name resolves to, not only the name: a person's view
 * over pg_stat_activity or over views of pg_authid, and a SECURITY DEFINER function, are resolved
 * by the server in the call's transaction and refused before the statement runs.
 */
describe.skipIf(!available)('run_query resolves what the names in a statement refer to', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let db: pg.Client | undefined;
  let shim: ShimHandle;
  let writer: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG);
    db = scratch.db;
    const url = scratch.url;
    await db.query('CREATE TABLE public.orders (id int, item text)');
    await db.query("INSERT INTO public.orders VALUES (1, 'apple')");
    await db.query('CREATE VIEW public.sessions AS SELECT pid, query FROM pg_catalog.pg_stat_activity');
    await db.query('CREATE VIEW public.role_names AS SELECT rolname, rolpassword FROM pg_catalog.pg_authid');
    await db.query('CREATE VIEW public.role_names2 AS SELECT * FROM public.role_names');
    await db.query('CREATE SCHEMA app');
    await db.query('CREATE VIEW app."Recent" AS SELECT r.rolname FROM public.role_names2 r');
    // Names that are not one word, reached only from a text body (quoted, with a space, a dash, a quote).
    await db.query('CREATE VIEW app."role list" AS SELECT r.rolname FROM public.role_names r');
    await db.query(
      `CREATE FUNCTION public.names_pl() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT string_agg(rolname, ',') FROM app."role list"); END $$`,
    );
    await db.query(
      `CREATE FUNCTION app."snoop-it.now"() RETURNS SETOF text LANGUAGE sql SECURITY DEFINER AS 'SELECT query FROM pg_catalog.pg_stat_activity'`,
    );
    await db.query(
      `CREATE FUNCTION public.via_quoted() RETURNS SETOF text LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY SELECT * FROM app."snoop-it.now"(); END $$`,
    );
    // Unicode-escaped names: a person's view, and a refused catalog.
    await db.query(
      `CREATE FUNCTION public.names_u() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT string_agg(rolname, ',') FROM app.u&"role\\0020list"); END $$`,
    );
    await db.query(
      `CREATE FUNCTION public.hashes_u() RETURNS text LANGUAGE sql AS $$ SELECT string_agg(rolpassword, ',') FROM pg_catalog.U&"pg_\\+000061uthid" $$`,
    );
    await db.query(
      "CREATE FUNCTION public.peek() RETURNS SETOF text LANGUAGE sql SECURITY DEFINER AS 'SELECT query FROM pg_catalog.pg_stat_activity'",
    );
    await db.query(
      `CREATE FUNCTION public."Peek"() RETURNS SETOF text LANGUAGE sql SECURITY DEFINER AS 'SELECT query FROM pg_catalog.pg_stat_activity'`,
    );
    await db.query('CREATE VIEW public.peeked AS SELECT q FROM public.peek() AS q');
    await db.query("CREATE FUNCTION public.plain() RETURNS int LANGUAGE sql AS 'SELECT 1'");
    // hanactl's own verifying function (hanactl context-sql), and an impostor of the same name.
    await db.query('CREATE SCHEMA hanactl');
    await db.query('CREATE TABLE hanactl.context_keys (id text PRIMARY KEY, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)');
    await db.query(
      `CREATE FUNCTION hanactl.context(name text) RETURNS text LANGUAGE sql STABLE STRICT SECURITY DEFINER AS $hanactl$${contextFunctionBody('hanactl')}$hanactl$`,
    );
    await db.query("CREATE VIEW public.mine AS SELECT hanactl.context('customer_id') AS c");
    await db.query('CREATE SCHEMA evil');
    await db.query(
      "CREATE FUNCTION evil.context(name text) RETURNS text LANGUAGE sql SECURITY DEFINER AS 'SELECT query FROM pg_catalog.pg_stat_activity LIMIT 1'",
    );
    await home.ok(['add', '--no-test', '--no-password', 'pgres', url]);
    shim = await startShim(home.env, ['--connection', 'pgres']);
    await home.ok(['add', '--no-test', '--no-password', '--allow-write', 'pgwrite', url]);
    writer = await startShim(home.env, ['--connection', 'pgwrite']);
  });

  afterAll(async () => {
    await shim?.close();
    await writer?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['SELECT query FROM sessions', /Refused: .*sessions reads pg_stat_activity/],
    ['SELECT * FROM public.role_names2', /Refused: .*role_names2 reads pg_authid/],
    ['SELECT count(*) FROM orders JOIN app."Recent" ON true', /Refused: .*Recent.* reads pg_authid/],
    ['SELECT * FROM (SELECT * FROM role_names) AS r WHERE false', /Refused: .*role_names reads pg_authid/],
    ['SELECT peek()', /Refused: peek\(\) is a SECURITY DEFINER function/],
    ['SELECT * FROM public.peek()', /Refused: peek\(\) is a SECURITY DEFINER function/],
    ['SELECT "Peek"()', /Refused: Peek\(\) is a SECURITY DEFINER function/],
    ['SELECT * FROM peeked', /Refused: .*peeked calls peek\(\)/],
    ["SELECT evil.context('x')", /Refused: context\(\) is a SECURITY DEFINER function/],
    ['SELECT names_pl()', /Refused: names_pl\(\) reads pg_authid/],
    ['SELECT names_u()', /Refused: names_u\(\) reads pg_authid/],
    ['SELECT hashes_u()', /Refused: hashes_u\(\) reads pg_authid/],
    ['SELECT * FROM via_quoted()', /Refused: via_quoted\(\) calls snoop-it.now\(\), a SECURITY DEFINER function/],
  ])('refuses %s', async (sql, message) => {
    const result = await shim.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/SELECT query FROM pg_catalog/);
  });

  it('still answers statements over ordinary tables, functions and names of common table expressions', async () => {
    // A SECURITY DEFINER function of the same name anywhere is enough to refuse a call by that name.
    await db?.query('DROP FUNCTION evil.context(text)');
    for (const [sql, rows] of [
      ['SELECT 1 AS one', [{ one: 1 }]],
      ['SELECT item FROM orders', [{ item: 'apple' }]],
      ['SELECT plain() AS p, lower(item) AS l FROM public.orders', [{ p: 1, l: 'apple' }]],
      ["SELECT hanactl.context('customer_id') AS c", [{ c: null }]],
      ['SELECT c FROM mine', [{ c: null }]],
      ['WITH recent AS (SELECT 2 AS n) SELECT n FROM recent', [{ n: 2 }]],
      ['SELECT rolname FROM pg_roles WHERE rolname = current_user', [{ rolname: expect.any(String) }]],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
  });

  /** The rows of a call that must answer, or a failed expectation with the call's text. */
  const rowsOf = async (handle: ShimHandle, sql: string): Promise<unknown> => {
    const result = await handle.call('run_query', { sql });
    expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    return (result.structuredContent as { rows: unknown }).rows;
  };

  it('judges what a name is at each call, whatever it was at the calls before', async () => {
    await db?.query('CREATE TABLE public.shifting (n int)');
    await db?.query('INSERT INTO public.shifting VALUES (1)');
    expect(await rowsOf(shim, 'SELECT n FROM shifting')).toEqual([{ n: 1 }]);
    // The table becomes a view over other sessions' statements...
    await db?.query('DROP TABLE public.shifting');
    await db?.query('CREATE VIEW public.shifting AS SELECT pid AS n FROM pg_catalog.pg_stat_activity');
    const refused = await shim.call('run_query', { sql: 'SELECT n FROM shifting' });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/Refused: .*shifting reads pg_stat_activity/);
    // ...and a table again.
    await db?.query('DROP VIEW public.shifting');
    await db?.query('CREATE TABLE public.shifting (n int)');
    await db?.query('INSERT INTO public.shifting VALUES (2)');
    expect(await rowsOf(shim, 'SELECT n FROM shifting')).toEqual([{ n: 2 }]);
  });

  it('refuses a function from the call after it is made SECURITY DEFINER, and answers once it is not', async () => {
    await db?.query("CREATE FUNCTION public.turning() RETURNS int LANGUAGE sql AS 'SELECT 3'");
    expect(await rowsOf(shim, 'SELECT turning() AS t')).toEqual([{ t: 3 }]);
    await db?.query('ALTER FUNCTION public.turning() SECURITY DEFINER');
    const refused = await shim.call('run_query', { sql: 'SELECT turning() AS t' });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/Refused: turning\(\) is a SECURITY DEFINER function/);
    await db?.query('ALTER FUNCTION public.turning() SECURITY INVOKER');
    expect(await rowsOf(shim, 'SELECT turning() AS t')).toEqual([{ t: 3 }]);
  });

  it('refuses a function in any language that reaches a SECURITY DEFINER function through its argument type', async () => {
    await db?.query("CREATE FUNCTION public.vouch() RETURNS boolean LANGUAGE sql SECURITY DEFINER AS 'SELECT true'");
    await db?.query('CREATE DOMAIN public.vouched AS int CHECK (public.vouch())');
    // A C-language function of the server's, declared anew over the domain: no body to read.
    await db?.query("CREATE FUNCTION public.vouched_abs(public.vouched) RETURNS int LANGUAGE internal IMMUTABLE STRICT AS 'int4abs'");
    const refused = await shim.call('run_query', { sql: 'SELECT vouched_abs(-5) AS a' });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/Refused: .*vouch\(\)/);
  });

  it('runs a write that reads a view once, and one that reads a refused view not at all', async () => {
    await db?.query('CREATE VIEW public.orders_view AS SELECT id, item FROM public.orders');
    // The view sends the call to the full walk: the write is made once, by the call made again.
    await rowsOf(writer, 'INSERT INTO orders (id, item) SELECT 5, item FROM orders_view WHERE id = 1');
    const refused = await writer.call('run_query', { sql: 'INSERT INTO orders (id, item) SELECT 6, query FROM sessions' });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/Refused: .*sessions reads pg_stat_activity/);
    const { rows } = (await db?.query('SELECT id, count(*)::int AS n FROM public.orders WHERE id IN (5, 6) GROUP BY id')) ?? { rows: [] };
    expect(rows).toEqual([{ id: 5, n: 1 }]);
  });
});
