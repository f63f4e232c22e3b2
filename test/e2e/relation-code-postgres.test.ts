/**
 * Built-ins that take a relation and run the code the server keeps beside it, through the real
 * shim, daemon and PostgreSQL on a read-only connection: satisfies_hash_partition calls the
 * partition key's hash function, amcheck's bt_index_check the index's comparison function. Here
 * both are a person's PL/pgSQL that resets the database's statistics (pg_stat_reset, which a
 * read-only transaction does not stop), so pg_stat_database.stats_reset shows whether it ran. A
 * relation named by a constant is judged as a read of it; one given as an OID or chosen when the
 * statement runs, in the statement or in a person's view or function, is refused; an index of
 * built-in classes is still checked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `fix_relcode_${process.pid}`;

const OBJECTS = [
  'CREATE EXTENSION amcheck',
  // A hash partition key whose support functions reset the statistics.
  'CREATE FUNCTION public.rc_hash(v int4) RETURNS int4 LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.pg_stat_reset(); RETURN pg_catalog.hashint4(v); END $$',
  'CREATE FUNCTION public.rc_hash_ext(v int4, seed int8) RETURNS int8 LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.pg_stat_reset(); RETURN pg_catalog.hashint4extended(v, seed); END $$',
  'CREATE OPERATOR CLASS public.rc_hash_ops FOR TYPE int4 USING hash AS OPERATOR 1 =, FUNCTION 1 public.rc_hash(int4), FUNCTION 2 public.rc_hash_ext(int4, int8)',
  'CREATE TABLE public.hp (a int) PARTITION BY HASH (a public.rc_hash_ops)',
  // A btree class whose comparison function resets the statistics, and an index of the built-in class.
  'CREATE FUNCTION public.rc_cmp(a int4, b int4) RETURNS int4 LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.pg_stat_reset(); RETURN pg_catalog.btint4cmp(a, b); END $$',
  'CREATE OPERATOR CLASS public.rc_btree_ops FOR TYPE int4 USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 public.rc_cmp(int4, int4)',
  'CREATE TABLE public.measured (x int)',
  'INSERT INTO public.measured SELECT g FROM generate_series(1, 500) AS g',
  'CREATE INDEX measured_person ON public.measured (x public.rc_btree_ops)',
  'CREATE INDEX measured_plain ON public.measured (x)',
  // A person's view and function that hand satisfies_hash_partition a relation chosen when they run, and a view that names it.
  "CREATE VIEW public.hp_runtime AS SELECT pg_catalog.satisfies_hash_partition(c.oid, 2, 0, 5) AS ok FROM pg_catalog.pg_class c WHERE c.relname = 'hp'",
  'CREATE FUNCTION public.check_rel(r regclass) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN pg_catalog.satisfies_hash_partition(r, 2, 0, 5); END $$',
  "CREATE FUNCTION public.check_named() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN RETURN pg_catalog.satisfies_hash_partition('public.hp'::regclass, 2, 0, 5); END $$",
  "CREATE VIEW public.hp_named AS SELECT pg_catalog.satisfies_hash_partition('public.hp'::regclass, 2, 0, 5) AS ok",
  "CREATE VIEW public.plain_checked AS SELECT true AS ok FROM public.bt_index_check('public.measured_plain'::regclass)",
];

describe.skipIf(!available)('run_query judges the code a built-in runs for the relation it is given', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  /** When the scratch database's statistics were last reset, read outside hanactl. */
  const statsReset = async (): Promise<string> => {
    const { rows } = await (scratch as ScratchPgDatabase).db.query(
      'SELECT stats_reset::text AS at FROM pg_catalog.pg_stat_database WHERE datname = pg_catalog.current_database()',
    );
    return String(rows[0]?.at);
  };

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    // The person's comparison function ran when the index was built: the statistics were reset then.
    await scratch.db.query('SELECT pg_catalog.pg_stat_reset()');
    await home.ok(['add', '--no-test', '--no-password', 'pgrelcode', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'pgrelcode']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ["SELECT pg_catalog.satisfies_hash_partition('hp'::regclass, 2, 0, 5)", /Refused: .*hp.* calls pg_stat_reset\(\)/],
    ["SELECT satisfies_hash_partition('public.hp'::pg_catalog.regclass, 2, 0, 5)", /Refused: .*hp.* calls pg_stat_reset\(\)/],
    [
      'SELECT satisfies_hash_partition(CAST(c.oid AS oid), 2, 0, 5) FROM pg_class c WHERE c.relname = $$hp$$',
      /chosen only when the statement runs/,
    ],
    ["SELECT satisfies_hash_partition(c.oid, 2, 0, 5) FROM pg_class c WHERE c.relname = 'hp'", /chosen only when the statement runs/],
    ["SELECT satisfies_hash_partition('hp'::regclass::oid, 2, 0, 5)", /chosen only when the statement runs/],
    ["SELECT bt_index_check('measured_person')", /Refused: .*measured_person.* calls pg_stat_reset\(\)/],
    ["SELECT bt_index_check('public.measured_person'::regclass, true)", /Refused: .*measured_person.* calls pg_stat_reset\(\)/],
    ["SELECT bt_index_check(c.oid::regclass) FROM pg_class c WHERE c.relname = 'measured_person'", /chosen only when the statement runs/],
    ['SELECT ok FROM hp_runtime', /hp_runtime hands a built-in that runs a relation's own code .* chosen only when it runs/],
    ["SELECT check_rel('hp')", /check_rel\(\) hands a built-in that runs a relation's own code .* chosen only when it runs/],
    ['SELECT ok FROM hp_named', /Refused: .*hp_named.* calls pg_stat_reset\(\)/],
    ['SELECT check_named()', /Refused: .*check_named.* calls pg_stat_reset\(\)/],
  ])('refuses %s, and the person’s code does not run', async (sql, message) => {
    const before = await statsReset();
    const result = await shim.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await statsReset()).toBe(before);
  });

  it('refuses the relation given as an OID constant', async () => {
    const { rows } = await (scratch as ScratchPgDatabase).db.query("SELECT 'public.hp'::regclass::oid::int AS oid");
    const before = await statsReset();
    for (const sql of [
      `SELECT satisfies_hash_partition(${rows[0]?.oid}, 2, 0, 5)`,
      `SELECT satisfies_hash_partition('${rows[0]?.oid}', 2, 0, 5)`,
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/satisfies_hash_partition\(\) runs code .* as a number \(an OID\)/);
    }
    expect(await statsReset()).toBe(before);
  });

  it('still checks an index of built-in classes, named or through a view', async () => {
    for (const sql of [
      "SELECT true AS ok FROM bt_index_check('public.measured_plain', true)",
      "SELECT true AS ok FROM bt_index_check('measured_plain'::regclass)",
      'SELECT ok FROM plain_checked',
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ ok: true }] });
    }
  });
});
