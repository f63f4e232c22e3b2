import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_implicit_${process.pid}`;

/**
 * A person's code the server runs for a statement that names only built-ins or a plain table:
 * an implicit cast between built-in types through a person's function (picked while resolving a
 * built-in function's arguments), the comparator of a person's operator class that an index scan
 * calls, and a person's default btree operator class for a built-in type (a DISTINCT or ORDER BY
 * compares with it).
 */
const OBJECTS = [
  // An operator class whose comparator cancels another session's statement, used by an index.
  'CREATE FUNCTION public.my_cmp(a int4, b int4) RETURNS int4 LANGUAGE sql AS $$ SELECT CASE WHEN pg_catalog.pg_cancel_backend(0) THEN 0 ELSE pg_catalog.btint4cmp(a, b) END $$',
  'CREATE OPERATOR CLASS public.my_ops FOR TYPE int4 USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 public.my_cmp(int4, int4)',
  'CREATE TABLE public.measured (x int)',
  'INSERT INTO public.measured SELECT g FROM generate_series(1, 20000) AS g',
  'CREATE INDEX measured_x ON public.measured (x public.my_ops)',
  'ANALYZE public.measured',
  'CREATE VIEW public.measured_v AS SELECT x FROM public.measured',
  // An ordinary table with a plain btree index: still answers.
  'CREATE TABLE public.plain (x int, label text)',
  "INSERT INTO public.plain SELECT g, 'n' || g FROM generate_series(1, 20000) AS g",
  'CREATE INDEX plain_x ON public.plain (x)',
  'ANALYZE public.plain',
];

/**
 * Objects made in a database of their own each, which the server may call for any statement: an
 * implicit cast between built-in types through a person's function, and a default btree operator
 * class for a built-in type that has none.
 */
const CAST = [
  // An implicit cast point -> text through a SECURITY DEFINER function reading other sessions' statements.
  "CREATE FUNCTION public.point_text(p point) RETURNS text SECURITY DEFINER LANGUAGE sql AS $$ SELECT string_agg(query, ' | ') FROM pg_catalog.pg_stat_activity $$",
  'CREATE CAST (point AS text) WITH FUNCTION public.point_text(point) AS IMPLICIT',
];

const DEFAULT_CLASS = [
  'CREATE FUNCTION public.pt_cmp(a point, b point) RETURNS int4 SECURITY DEFINER LANGUAGE sql AS $$ SELECT pg_catalog.btfloat8cmp(a[0], b[0]) $$',
  'CREATE FUNCTION public.pt_lt(a point, b point) RETURNS boolean LANGUAGE sql AS $$ SELECT a[0] < b[0] $$',
  'CREATE FUNCTION public.pt_le(a point, b point) RETURNS boolean LANGUAGE sql AS $$ SELECT a[0] <= b[0] $$',
  'CREATE FUNCTION public.pt_eq(a point, b point) RETURNS boolean LANGUAGE sql AS $$ SELECT a[0] = b[0] $$',
  'CREATE FUNCTION public.pt_ge(a point, b point) RETURNS boolean LANGUAGE sql AS $$ SELECT a[0] >= b[0] $$',
  'CREATE FUNCTION public.pt_gt(a point, b point) RETURNS boolean LANGUAGE sql AS $$ SELECT a[0] > b[0] $$',
  'CREATE OPERATOR public.< (leftarg = point, rightarg = point, function = public.pt_lt)',
  'CREATE OPERATOR public.<= (leftarg = point, rightarg = point, function = public.pt_le)',
  'CREATE OPERATOR public.= (leftarg = point, rightarg = point, function = public.pt_eq)',
  'CREATE OPERATOR public.>= (leftarg = point, rightarg = point, function = public.pt_ge)',
  'CREATE OPERATOR public.> (leftarg = point, rightarg = point, function = public.pt_gt)',
  'CREATE OPERATOR CLASS public.pt_ops DEFAULT FOR TYPE point USING btree AS OPERATOR 1 public.<, OPERATOR 2 public.<=, OPERATOR 3 public.=, OPERATOR 4 public.>=, OPERATOR 5 public.>, FUNCTION 1 public.pt_cmp(point, point)',
  'CREATE TABLE public.spots (p point)',
  "INSERT INTO public.spots VALUES ('(1,2)'), ('(3,4)')",
];

describe.skipIf(!available)('run_query judges the code the server calls for a statement without naming it', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let other: ScratchPgDatabase | undefined;
  let casts: ScratchPgDatabase | undefined;
  let shim: ShimHandle;
  let shimDefault: ShimHandle;
  let shimCast: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    other = await scratchPgDatabase(`${TAG}_d`, DEFAULT_CLASS);
    casts = await scratchPgDatabase(`${TAG}_c`, CAST);
    // The statements below reach the person's comparator only through the index: it must be used.
    const plan = await scratch.db.query('EXPLAIN SELECT x FROM public.measured WHERE x = 5');
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index (Only )?Scan using measured_x/);
    const plain = await scratch.db.query('EXPLAIN SELECT x, label FROM public.plain WHERE x = 5');
    expect(plain.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/Index Scan using plain_x/);
    await home.ok(['add', '--no-test', '--no-password', 'pgimplicit', scratch.url]);
    await home.ok(['add', '--no-test', '--no-password', 'pgimplicitd', other.url]);
    shim = await startShim(home.env, ['--connection', 'pgimplicit']);
    await home.ok(['add', '--no-test', '--no-password', 'pgimplicitc', casts.url]);
    shimDefault = await startShim(home.env, ['--connection', 'pgimplicitd']);
    shimCast = await startShim(home.env, ['--connection', 'pgimplicitc']);
  });

  afterAll(async () => {
    await shim?.close();
    await shimDefault?.close();
    await shimCast?.close();
    await home.dispose();
    await scratch?.drop();
    await other?.drop();
    await casts?.drop();
  });

  it.each([
    ['pgimplicitc', 'SELECT lower(point(1, 2)) AS l', /Refused: cast point AS text calls point_text\(\), a SECURITY DEFINER function/],
    ['pgimplicit', 'SELECT x FROM measured WHERE x = 5', /Refused: .*measured.* calls pg_cancel_backend\(\)/],
    ['pgimplicit', 'SELECT x FROM measured_v WHERE x = 5', /Refused: .*measured_v.* calls pg_cancel_backend\(\)/],
  ])('on %s refuses %s', async (connection, sql, message) => {
    const result = await (connection === 'pgimplicit' ? shim : shimCast).call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/pg_stat_activity \$\$/);
  });

  it('refuses a DISTINCT over a built-in type whose default btree class is a person’s', async () => {
    const result = await shimDefault.call('run_query', { sql: 'SELECT DISTINCT p FROM spots' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .* calls pt_cmp\(\), a SECURITY DEFINER function/);
  });

  it('still answers an ordinary read of a table with a plain btree index', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT x, label FROM plain WHERE x = 5' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ x: 5, label: 'n5' }] });
  });
});
