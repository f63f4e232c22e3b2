import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_links_${process.pid}`;

/** A body that ends another session's statement: pid 0 is none, so it is harmless here, and refused by name. */
const CANCEL = 'PERFORM pg_catalog.pg_cancel_backend(0);';

/**
 * A person's code the planner or executor runs for a statement that never names it, reached
 * through a catalog link: an operator's negator (NOT a <<< b becomes a >>>= b), its commutator
 * (the estimator of 50 <~ id calls it on the column's statistics), the members of its operator
 * family (a merge join's ordering operator, a sort's comparator, a hash join's hash function), a
 * range's subtype class, a person's default class for a person's type (DISTINCT, ORDER BY), and
 * what the server keeps beside a table it reads: a partition key's class and expression, a child's
 * CHECK (constraint exclusion), an index's predicate and expression and a statistics object's
 * expression (the relation cache and the planner fold their constant calls).
 */
const OBJECTS = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.t (id int)',
  'INSERT INTO app.t SELECT g FROM generate_series(1, 100) AS g',
  'ANALYZE app.t',
  `CREATE FUNCTION app.evil_bool(a int, b int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN a <= b; END $$`,
  `CREATE FUNCTION app.evil_cmp(a int, b int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.btint4cmp(a, b); END $$`,
  `CREATE FUNCTION app.evil_hash(a int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.hashint4(a); END $$`,
  `CREATE FUNCTION app.lim(n int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN n; END $$`,
  "CREATE FUNCTION app.gt_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a > b'",
  "CREATE FUNCTION app.lt_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a < b'",
  "CREATE FUNCTION app.eq_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a = b'",
  'CREATE OPERATOR app.<<< (leftarg = int, rightarg = int, function = app.gt_f)',
  'CREATE OPERATOR app.>>>= (leftarg = int, rightarg = int, function = app.evil_bool, negator = OPERATOR(app.<<<))',
  'CREATE OPERATOR app.<~ (leftarg = int, rightarg = int, function = app.lt_f, restrict = scalarltsel)',
  'CREATE OPERATOR app.~> (leftarg = int, rightarg = int, function = app.evil_bool, commutator = OPERATOR(app.<~))',
  'CREATE OPERATOR app.<# (leftarg = int, rightarg = int, function = app.evil_bool)',
  'CREATE OPERATOR app.=# (leftarg = int, rightarg = int, function = app.eq_f, merges)',
  'CREATE OPERATOR CLASS app.m_ops FOR TYPE int4 USING btree AS OPERATOR 1 app.<#, OPERATOR 2 <=, OPERATOR 3 app.=#, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 pg_catalog.btint4cmp(int4, int4)',
  'CREATE OPERATOR app.<^ (leftarg = int, rightarg = int, function = app.lt_f)',
  'CREATE OPERATOR CLASS app.s_ops FOR TYPE int4 USING btree AS OPERATOR 1 app.<^, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 app.evil_cmp(int4, int4)',
  'CREATE OPERATOR app.=% (leftarg = int, rightarg = int, function = app.eq_f, hashes)',
  'CREATE OPERATOR CLASS app.h_ops FOR TYPE int4 USING hash AS OPERATOR 1 app.=%, FUNCTION 1 app.evil_hash(int4)',
  'CREATE OPERATOR CLASS app.evil_int_ops FOR TYPE int4 USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 app.evil_cmp(int4, int4)',
  'CREATE TYPE app.irange AS RANGE (subtype = int4, subtype_opclass = app.evil_int_ops)',
  'CREATE TABLE app.pt (id int, v text) PARTITION BY RANGE (id app.evil_int_ops)',
  'CREATE TABLE app.pt1 PARTITION OF app.pt FOR VALUES FROM (0) TO (10)',
  'CREATE TABLE app.pt2 PARTITION OF app.pt FOR VALUES FROM (10) TO (20)',
  'CREATE TABLE app.pe (id int) PARTITION BY RANGE ((id + app.lim(0)))',
  'CREATE TABLE app.pe1 PARTITION OF app.pe FOR VALUES FROM (0) TO (100)',
  'CREATE TABLE app.par (id int)',
  'CREATE TABLE app.ch (CHECK (id < app.lim(100))) INHERITS (app.par)',
  'CREATE TABLE app.t3 (id int)',
  'CREATE INDEX t3_part ON app.t3 (id) WHERE id > app.lim(10)',
  'CREATE VIEW app.v3 AS SELECT id FROM app.t3',
  'CREATE TABLE app.t5 (id int)',
  'CREATE INDEX t5_expr ON app.t5 ((id + app.lim(1)))',
  'CREATE TABLE app.t4 (id int, v int)',
  'CREATE STATISTICS app.t4_st ON (id + app.lim(1)), v FROM app.t4',
  // A person's enum with a person's default btree class, whose comparator DISTINCT and ORDER BY call unnamed.
  "CREATE TYPE app.mood AS ENUM ('sad', 'ok', 'happy')",
  'CREATE FUNCTION app.mood_lt(a app.mood, b app.mood) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT a::text < b::text $$',
  `CREATE FUNCTION app.mood_cmp(a app.mood, b app.mood) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.bttextcmp(a::text, b::text); END $$`,
  'CREATE OPERATOR app.<@< (leftarg = app.mood, rightarg = app.mood, function = app.mood_lt)',
  'CREATE OPERATOR CLASS app.mood_ops DEFAULT FOR TYPE app.mood USING btree AS OPERATOR 1 app.<@<, FUNCTION 1 app.mood_cmp(app.mood, app.mood)',
  'CREATE TABLE app.feel (m app.mood)',
  "INSERT INTO app.feel VALUES ('ok'), ('sad')",
  // What still answers: a table with a plain index, CHECK and statistics object.
  'CREATE TABLE app.plain (id int CHECK (id > 0), v int)',
  'INSERT INTO app.plain VALUES (5, 50), (20, 200)',
  'CREATE INDEX plain_id ON app.plain (id) WHERE id > 10',
  'CREATE STATISTICS app.plain_st ON (id + 1), v FROM app.plain',
];

// Each refusal below comes from the full walk, which a busy server takes seconds to plan.
describe.skipIf(!available)('the resolve step follows the catalog links the planner and executor take', { timeout: 300_000 }, () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await home.ok(['add', '--no-test', '--no-password', 'pglinks', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'pglinks']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['run_query', 'SELECT NOT (id OPERATOR(app.<<<) 2) AS n FROM app.t LIMIT 1', /operator <<< calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t WHERE 50 OPERATOR(app.<~) id', /operator <~ calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t a JOIN app.t b ON a.id OPERATOR(app.=#) b.id', /operator =# calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT id FROM app.t ORDER BY id USING OPERATOR(app.<^) LIMIT 2', /operator <\^ calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t a JOIN app.t b ON a.id OPERATOR(app.=%) b.id', /operator =% calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT app.irange(1, 5) AS r', /irange\(\) calls pg_cancel_backend\(\)/],
    ['run_query', "SELECT '[1,5)'::app.irange AS r", /type irange calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.pt WHERE id = 5', /pt.* calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.pe WHERE id = 5', /pe.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.par WHERE id = 5', /par.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t3 WHERE id = 5', /t3.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.v3 WHERE id = 5', /v3.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t5', /t5.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t4', /t4.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT DISTINCT m FROM app.feel', /feel.* calls pg_cancel_backend\(\)/],
  ])('%s refuses %s', async (tool, sql, message) => {
    const result = await shim.call(tool, { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: /);
    expect(textOf(result)).toMatch(message);
  });

  it.each([
    ['t4', /t4.* calls pg_cancel_backend\(\)/],
    ['t3', /t3.* calls pg_cancel_backend\(\)/],
    ['pt', /pt.* calls pg_cancel_backend\(\)/],
  ])('sample_rows refuses %s', async (table, message) => {
    const result = await shim.call('sample_rows', { schema: 'app', table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('still answers reads of a table whose index, CHECK and statistics use only built-ins, and of a plain table', async () => {
    for (const [sql, rows] of [
      ['SELECT id, v FROM app.plain WHERE id = 20', [{ id: 20, v: 200 }]],
      ['SELECT id FROM app.t WHERE id = 2', [{ id: 2 }]],
      ['SELECT id FROM app.t ORDER BY id LIMIT 1', [{ id: 1 }]],
      // NOT over a built-in whose negator is built-in: the planner swaps in <>, which runs nothing of a person's.
      ['SELECT id FROM app.t WHERE NOT (id = 2) ORDER BY id LIMIT 1', [{ id: 1 }]],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
  });
});

const VICTIM = `${TAG}_victim`;

/** Ends every session of the victim's application name: what the person's operators below run. */
const TERMINATE = `PERFORM pg_catalog.pg_terminate_backend(s.pid) FROM pg_catalog.pg_stat_activity s WHERE s.application_name OPERATOR(pg_catalog.=) '${VICTIM}';`;

/**
 * A person's operator written into a built-in operator's row as its negator or commutator
 * (CREATE OPERATOR fills an empty link of the operator it names; PostgreSQL 15.20 asks for
 * ownership of that operator, which the server's own user has here). The planner swaps the negator
 * in for NOT over the built-in `@>`, and commutes a clause of the built-in `^@`, for a statement
 * that names only the built-in. In a scratch database: pg_operator is per database.
 */
/** Every statement of such a database is walked from both links: the refusal names the first it meets. */
const LINKED_REFUSAL = /Refused: operator (@>|\^@) (reads pg_stat_activity|calls pg_terminate_backend\(\))/;

const LINKED = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.a (v int[], t text)',
  "INSERT INTO app.a VALUES ('{1,2}', 'abc'), ('{3}', 'xyz')",
  'ANALYZE app.a',
  `CREATE FUNCTION app.noisy_fn(anyarray, anyarray) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN false; END $$`,
  'CREATE OPERATOR app.!@> (leftarg = anyarray, rightarg = anyarray, function = app.noisy_fn, negator = OPERATOR(pg_catalog.@>))',
  `CREATE FUNCTION app.noisy_t(text, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN false; END $$`,
  'CREATE OPERATOR app.@^ (leftarg = text, rightarg = text, function = app.noisy_t, commutator = OPERATOR(pg_catalog.^@))',
];

describe.skipIf(!available)(
  "the resolve step follows a person's operator a built-in names as its negator or commutator",
  { timeout: 300_000 },
  () => {
    const home = new TestHome();
    let scratch: ScratchPgDatabase | undefined;
    let shim: ShimHandle;
    let victim: pg.Client | undefined;

    beforeAll(async () => {
      scratch = await scratchPgDatabase(`${TAG}_b`, LINKED);
      await home.ok(['add', '--no-test', '--no-password', 'pglinked', scratch.url]);
      shim = await startShim(home.env, ['--connection', 'pglinked']);
      victim = new pg.Client({ connectionString: scratch.url, application_name: VICTIM });
      // Ended from outside, the client reports the error on itself.
      victim.on('error', () => {});
      await victim.connect();
    });

    afterAll(async () => {
      await victim?.end().catch(() => {});
      await shim?.close();
      await home.dispose();
      await scratch?.drop();
    });

    it.each([
      ['run_query', 'SELECT v FROM app.a WHERE NOT (v @> ARRAY[2])', LINKED_REFUSAL],
      ['explain_query', 'SELECT v FROM app.a WHERE NOT (v @> ARRAY[2])', LINKED_REFUSAL],
      ['run_query', "SELECT t FROM app.a WHERE 'ab' ^@ t", LINKED_REFUSAL],
      ['run_query', "SELECT t FROM app.a WHERE t ^@ 'ab'", LINKED_REFUSAL],
    ])('%s refuses %s, and the other session lives', async (tool, sql, message) => {
      const result = await shim.call(tool, { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: /);
      expect(textOf(result)).toMatch(message);
      const alive = await victim?.query('SELECT 1 AS one');
      expect(alive?.rows).toEqual([{ one: 1 }]);
    });

    it('answers again once the operators are dropped, which clears the built-in rows', async () => {
      await scratch?.db.query('DROP OPERATOR app.!@> (anyarray, anyarray)');
      await scratch?.db.query('DROP OPERATOR app.@^ (text, text)');
      const result = await shim.call('run_query', { sql: "SELECT v FROM app.a WHERE NOT (v @> ARRAY[2]) AND t ^@ 'x'" });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ v: [3] }] });
      const alive = await victim?.query('SELECT 1 AS one');
      expect(alive?.rows).toEqual([{ one: 1 }]);
    });
  },
);
