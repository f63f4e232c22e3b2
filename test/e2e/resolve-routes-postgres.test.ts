import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFunctionBody } from '../../daemon/engines/postgres/postgres-signed-context.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_routes_${process.pid}`;

/** The body every refused helper below shares: other sessions' statements. */
const PEEK = "$$ SELECT string_agg(query, ' | ') FROM pg_catalog.pg_stat_activity $$";

/**
 * Objects a person may have created, each of which reaches other sessions' statements or the
 * server's password hashes by a route other than a function called by name or a view read by
 * name: attribute notation, an operator, an aggregate's state function, a cast, a domain's CHECK,
 * a window function, SQL/JSON keyword forms, an invoker function's body, a foreign table, an
 * inheritance child, and hanactl's own key table.
 */
const OBJECTS = [
  'CREATE TABLE public.orders (id int, item text)',
  "INSERT INTO public.orders VALUES (1, 'apple')",
  `CREATE FUNCTION public.peek(o public.orders) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  `CREATE FUNCTION public.peek2(a int, b int) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  `CREATE FUNCTION public.peek_sfunc(s text, a int) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  'CREATE FUNCTION public.peek_check(a int) RETURNS boolean SECURITY DEFINER LANGUAGE sql AS $$ SELECT count(*) >= 0 FROM pg_catalog.pg_stat_activity $$',
  'CREATE TYPE public.pk AS (a int)',
  'CREATE TYPE public.pk_plain AS (a int)',
  `CREATE FUNCTION public.pk_to_text(p public.pk) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  `CREATE FUNCTION public.json_scalar(a int) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  `CREATE FUNCTION public.json_serialize(a int) RETURNS text SECURITY DEFINER LANGUAGE sql AS ${PEEK}`,
  'CREATE OPERATOR public.### (leftarg = int, rightarg = int, function = public.peek2)',
  'CREATE AGGREGATE public.peekagg(int) (sfunc = public.peek_sfunc, stype = text)',
  'CREATE CAST (public.pk AS text) WITH FUNCTION public.pk_to_text(public.pk)',
  'CREATE DOMAIN public.checked AS int CHECK (public.peek_check(VALUE))',
  'CREATE VIEW public.v_op AS SELECT 1 OPERATOR(public.###) 2 AS x',
  'CREATE VIEW public.v_agg AS SELECT public.peekagg(1) AS x',
  'CREATE VIEW public.v_win AS SELECT public.peekagg(id) OVER () AS x FROM public.orders',
  'CREATE VIEW public.v_cast AS SELECT ROW(1)::public.pk::text AS x',
  'CREATE VIEW public.v_dom AS SELECT 1::public.checked AS x',
  'CREATE FUNCTION public.acts() RETURNS SETOF text LANGUAGE sql AS $$ SELECT query FROM pg_catalog.pg_stat_activity $$',
  'CREATE FUNCTION public.acts_atomic() RETURNS SETOF text LANGUAGE sql BEGIN ATOMIC SELECT query FROM pg_catalog.pg_stat_activity; END',
  'CREATE FUNCTION public.via_peek() RETURNS text LANGUAGE sql AS $$ SELECT public.peek2(1, 2) $$',
  'CREATE VIEW public.acts_v AS SELECT pid, query FROM pg_catalog.pg_stat_activity',
  'CREATE FUNCTION public.via_view() RETURNS SETOF text LANGUAGE sql AS $$ SELECT query FROM public.acts_v $$',
  'CREATE VIEW public.v_fn AS SELECT * FROM public.acts() AS a',
  // A person's view or invoker function over built-ins the agent may not call itself: another
  // session ended, statistics reset, configuration reloaded, a context value set.
  'CREATE VIEW public.v_kill AS SELECT pg_catalog.pg_terminate_backend(0) AS k',
  // A relation handed to table_to_xml that is only chosen when the statement runs.
  "CREATE FUNCTION public.export_table(t regclass) RETURNS xml LANGUAGE sql STABLE AS $$ SELECT table_to_xml(t, true, false, '') $$",
  "CREATE FUNCTION public.export_pl(t regclass) RETURNS xml LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN table_to_xml(t, true, false, ''); END $$",
  "CREATE FUNCTION public.export_atomic(t regclass) RETURNS xml LANGUAGE sql STABLE BEGIN ATOMIC SELECT table_to_xml(t, true, false, ''); END",
  "CREATE VIEW public.xml_all WITH (security_barrier) AS SELECT table_to_xml(to_regclass('acts_v'), true, false, '') AS d",
  "CREATE VIEW public.table_exports AS SELECT c.relname, table_to_xml(c.oid::regclass, true, false, '') AS doc FROM pg_catalog.pg_class c",
  'CREATE VIEW public.v_reset AS SELECT 1 AS r FROM (SELECT pg_catalog.pg_stat_reset()) AS s',
  'CREATE VIEW public.v_reload AS SELECT pg_catalog.pg_reload_conf() AS r',
  'CREATE FUNCTION public.f_logmem() RETURNS boolean LANGUAGE sql AS $$ SELECT pg_log_backend_memory_contexts(0) $$',
  "CREATE FUNCTION public.f_forge() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN set_config('mcp.customer_id', '2', true); END $$",
  'CREATE FUNCTION public.f_lock_atomic() RETURNS void LANGUAGE sql BEGIN ATOMIC SELECT pg_advisory_lock(42); END',
  'CREATE VIEW public.v_via_fn AS SELECT public.f_logmem() AS m',
  // The same built-ins behind a person's operator, aggregate, domain CHECK or default argument.
  'CREATE OPERATOR public.@@@ (rightarg = int, function = pg_catalog.pg_cancel_backend)',
  'CREATE AGGREGATE public.kill_agg(int) (sfunc = pg_catalog.int4larger, stype = int, finalfunc = pg_catalog.pg_cancel_backend)',
  'CREATE DOMAIN public.dres AS int CHECK (pg_catalog.pg_reload_conf() OR true)',
  "CREATE DOMAIN public.dforge AS text CHECK (pg_catalog.set_config('mcp.customer_id', VALUE, true) IS NOT NULL)",
  'CREATE FUNCTION public.fd2(x boolean DEFAULT pg_catalog.pg_reload_conf()) RETURNS boolean LANGUAGE sql AS $$ SELECT x $$',
  'CREATE VIEW public.v_killagg AS SELECT public.kill_agg(0) AS k',
  // What still answers: a person's operator over an invoker function, a partitioned table.
  "CREATE FUNCTION public.plain_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b'",
  'CREATE OPERATOR public.%%% (leftarg = int, rightarg = int, function = public.plain_add)',
  'CREATE VIEW public.v_plain AS SELECT 1 OPERATOR(public.%%%) 2 AS x, item FROM public.orders',
  'CREATE TABLE public.part_parent (n int) PARTITION BY RANGE (n)',
  'CREATE TABLE public.part_child PARTITION OF public.part_parent FOR VALUES FROM (0) TO (10)',
  'INSERT INTO public.part_parent VALUES (4)',
  // A foreign table over pg_authid, read directly and as an inheritance child.
  'CREATE EXTENSION postgres_fdw',
  "CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'postgres')",
  'CREATE USER MAPPING FOR CURRENT_USER SERVER loop',
  "CREATE FOREIGN TABLE public.ft_authid (rolname name, rolpassword text) SERVER loop OPTIONS (schema_name 'pg_catalog', table_name 'pg_authid')",
  'CREATE TABLE public.inh_parent (rolname name, rolpassword text)',
  "CREATE FOREIGN TABLE public.inh_child () INHERITS (public.inh_parent) SERVER loop OPTIONS (schema_name 'pg_catalog', table_name 'pg_authid')",
  // hanactl's own key table and verifying function (hanactl context-sql).
  'CREATE SCHEMA hanactl',
  'CREATE TABLE hanactl.context_keys (id text PRIMARY KEY, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)',
  "INSERT INTO hanactl.context_keys VALUES ('k1', '\\x3636', '\\x5c5c')",
  `CREATE FUNCTION hanactl.context(name text) RETURNS text LANGUAGE sql STABLE STRICT SECURITY DEFINER AS $hanactl$${contextFunctionBody('hanactl')}$hanactl$`,
  'CREATE VIEW public.keys_v AS SELECT * FROM hanactl.context_keys',
];

describe.skipIf(!available)('run_query resolves every route from a statement to a function or relation', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    const url = scratch.url;
    await home.ok(['add', '--no-test', '--no-password', 'pgroutes', url]);
    shim = await startShim(home.env, ['--connection', 'pgroutes']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['SELECT o.peek FROM orders o LIMIT 1', /Refused: peek\(\) is a SECURITY DEFINER function/],
    ['SELECT reverse((o).peek) FROM orders o LIMIT 1', /Refused: peek\(\) is a SECURITY DEFINER function/],
    ['SELECT reverse(1 ### 2)', /Refused: operator ### calls peek2\(\), a SECURITY DEFINER function/],
    ['SELECT peekagg(1)', /Refused: peekagg\(\) calls peek_sfunc\(\), a SECURITY DEFINER function/],
    ['SELECT peekagg(id) OVER () FROM orders', /Refused: peekagg\(\) calls peek_sfunc\(\)/],
    ['SELECT ROW(1)::pk::text', /Refused: (cast pk AS text|type pk) calls pk_to_text\(\)/],
    // Every cast of a person's type is followed, explicit ones too: to_json and its family call one unnamed.
    ['SELECT ROW(1)::pk AS p', /Refused: type pk calls pk_to_text\(\)/],
    ['SELECT 1::checked', /Refused: type checked calls peek_check\(\)/],
    ['SELECT * FROM v_op', /Refused: .*v_op.* calls peek2\(\)/],
    ['SELECT * FROM v_agg', /Refused: .*v_agg.* calls peek_sfunc\(\)/],
    ['SELECT * FROM v_win', /Refused: .*v_win.* calls peek_sfunc\(\)/],
    ['SELECT * FROM v_cast', /Refused: .*v_cast.* calls pk_to_text\(\)/],
    ['SELECT * FROM v_dom', /Refused: .*v_dom.* calls peek_check\(\)/],
    ['SELECT json_scalar(1)', /Refused: json_scalar\(\) is a SECURITY DEFINER function/],
    ['SELECT json_serialize(1)', /Refused: json_serialize\(\) is a SECURITY DEFINER function/],
    ['SELECT * FROM acts()', /Refused: acts\(\) reads pg_stat_activity/],
    ['SELECT * FROM acts_atomic()', /Refused: acts_atomic\(\) reads pg_stat_activity/],
    ['SELECT via_peek()', /Refused: via_peek\(\) calls peek2\(\)/],
    ['SELECT * FROM via_view()', /Refused: via_view\(\) reads pg_stat_activity/],
    ['SELECT * FROM v_fn', /Refused: .*v_fn.* reads pg_stat_activity/],
    ["SELECT query_to_xml('SELECT * FROM acts_v', true, true, '')", /Refused: .*acts_v.* reads pg_stat_activity/],
    ["SELECT query_to_xml('SELECT 1 ### 2', true, true, '')", /Refused: operator ### calls peek2\(\)/],
    ["SELECT reverse(table_to_xml('acts_v', true, false, '')::text)", /Refused: .*acts_v.* reads pg_stat_activity/],
    ["SELECT reverse(export_table('acts_v')::text)", /Refused: export_table\(\) hands table_to_xml .*a relation chosen only when it runs/],
    ["SELECT reverse(export_pl('v_kill')::text)", /Refused: export_pl\(\) hands table_to_xml .*a relation chosen only when it runs/],
    [
      "SELECT reverse(export_atomic('acts_v')::text)",
      /Refused: export_atomic\(\) hands table_to_xml .*a relation chosen only when it runs/,
    ],
    [
      "SELECT reverse(export_table(c.oid::regclass)::text) FROM pg_catalog.pg_class c WHERE c.relname = 'acts_v'",
      /Refused: export_table\(\) hands table_to_xml .*a relation chosen only when it runs/,
    ],
    ['SELECT reverse(d::text) FROM xml_all', /Refused: .*xml_all.* hands table_to_xml .*a relation chosen only when it runs/],
    [
      "SELECT reverse(doc::text) FROM table_exports WHERE relname = 'acts_v'",
      /Refused: .*table_exports.* hands table_to_xml .*chosen only when it runs/,
    ],
    ["SELECT length(database_to_xml(true, false, '')::text)", /Refused: database_to_xml\(\) reads every relation/],
    ["SELECT reverse(schema_to_xml('public', true, false, '')::text)", /Refused: schema_to_xml\(\) reads every relation/],
    ["SELECT rolname, substr(rolpassword, 2) FROM inh_parent WHERE rolname = 'x'", /Refused: .*inh_parent.* reads pg_authid/],
    ['SELECT reverse(rolpassword) FROM ft_authid', /Refused: .*ft_authid.* reads pg_authid/],
    ['SELECT * FROM hanactl.context_keys', /Refused: context_keys holds hanactl's context signing keys/],
    ['SELECT id FROM keys_v', /Refused: .*keys_v.* reads context_keys/],
    ['SELECT * FROM v_kill', /Refused: .*v_kill.* calls pg_terminate_backend\(\) through the objects it uses/],
    ['SELECT * FROM v_reset', /Refused: .*v_reset.* calls pg_stat_reset\(\)/],
    ['SELECT * FROM v_reload', /Refused: .*v_reload.* calls pg_reload_conf\(\)/],
    ['SELECT f_logmem()', /Refused: f_logmem\(\) calls pg_log_backend_memory_contexts\(\)/],
    ['SELECT f_forge()', /Refused: f_forge\(\) calls set_config\(\)/],
    ['SELECT f_lock_atomic()', /Refused: f_lock_atomic\(\) calls pg_advisory_lock\(\)/],
    ['SELECT * FROM v_via_fn', /Refused: .*v_via_fn.* calls pg_log_backend_memory_contexts\(\)/],
    ['SELECT @@@ 0', /Refused: operator @@@ calls pg_cancel_backend\(\)/],
    ['SELECT kill_agg(0)', /Refused: kill_agg\(\) calls pg_cancel_backend\(\)/],
    ['SELECT * FROM v_killagg', /Refused: .*v_killagg.* calls pg_cancel_backend\(\)/],
    ['SELECT 1::dres', /Refused: type dres calls pg_reload_conf\(\)/],
    // The walk also follows the person's casts to and from text, the domain's base type (pk AS text here).
    ["SELECT '2'::dforge", /Refused: type dforge calls (set_config|pk_to_text)\(\)/],
    ['SELECT fd2()', /Refused: fd2\(\) calls pg_reload_conf\(\)/],
  ])('refuses %s', async (sql, message) => {
    const result = await shim.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/pg_stat_activity \$\$|SCRAM-SHA-256|\\x3636/);
  });

  it.each([
    ['ft_authid', /Refused: .*ft_authid.* reads .*pg_authid/],
    ['inh_parent', /Refused: .*inh_parent.* reads .*pg_authid/],
    ['hanactl.context_keys', /Refused: .*context_keys.*/],
    ['keys_v', /Refused: .*keys_v.* reads .*context_keys/],
    ['v_op', /Refused: .*v_op.* calls peek2\(\), a SECURITY DEFINER function/],
    ['v_fn', /Refused: .*v_fn.* reads .*pg_stat_activity/],
    ['v_kill', /Refused: .*v_kill.* calls pg_terminate_backend\(\)/],
    ['v_killagg', /Refused: .*v_killagg.* calls pg_cancel_backend\(\)/],
    ['table_exports', /Refused: .*table_exports.* hands table_to_xml .*chosen only when it runs/],
    ['xml_all', /Refused: .*xml_all.* hands table_to_xml .*chosen only when it runs/],
  ])('sample_rows refuses %s', async (name, message) => {
    const [schema, table] = name.includes('.') ? name.split('.') : ['public', name];
    const result = await shim.call('sample_rows', { schema, table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/SCRAM-SHA-256|\\x3636/);
  });

  it('still answers statements over ordinary tables, operators, partitions and functions', async () => {
    for (const [sql, rows] of [
      ['SELECT 1 %%% 2 AS x', [{ x: 3 }]],
      ['SELECT x, item FROM v_plain', [{ x: 3, item: 'apple' }]],
      ['SELECT o.item, o.id + 1 AS n FROM orders o', [{ item: 'apple', n: 2 }]],
      ['SELECT n FROM part_parent', [{ n: 4 }]],
      ["SELECT count(*)::int AS c FROM query_to_xml('SELECT item FROM orders', true, true, '') AS x", [{ c: 1 }]],
      ["SELECT length(table_to_xml('orders', true, false, '')::text) > 0 AS t", [{ t: true }]],
      ['SELECT ROW(1)::pk_plain AS p', [{ p: '(1)' }]],
      ["SELECT hanactl.context('customer_id') AS c", [{ c: null }]],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
  });
});
