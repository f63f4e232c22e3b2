import { describe, expect, it } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_rlinks_${process.pid}`;

/** A body that ends another session's statement (pid 0 is none: harmless here, refused by name). */
const CANCEL = 'PERFORM pg_catalog.pg_cancel_backend(0);';

const OBJECTS = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.t (id int)',
  'INSERT INTO app.t SELECT g FROM generate_series(1, 100) AS g',
  `CREATE FUNCTION app.evil_bool(a int, b int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN a <= b; END $$`,
  `CREATE FUNCTION app.evil_cmp(a int, b int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.btint4cmp(a, b); END $$`,
  `CREATE FUNCTION app.evil_hash(a int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.hashint4(a); END $$`,
  `CREATE FUNCTION app.lim(n int) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN n; END $$`,
  "CREATE FUNCTION app.gt_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a > b'",
  "CREATE FUNCTION app.lt_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a < b'",
  "CREATE FUNCTION app.eq_f(a int, b int) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT a = b'",
  // 1. A negator, which the planner swaps in for NOT (a <<< b).
  'CREATE OPERATOR app.<<< (leftarg = int, rightarg = int, function = app.gt_f)',
  'CREATE OPERATOR app.>>>= (leftarg = int, rightarg = int, function = app.evil_bool, negator = OPERATOR(app.<<<))',
  // 2. A commutator, which scalarltsel calls when the column is on the right.
  'CREATE OPERATOR app.<~ (leftarg = int, rightarg = int, function = app.lt_f, restrict = scalarltsel)',
  'CREATE OPERATOR app.~> (leftarg = int, rightarg = int, function = app.evil_bool, commutator = OPERATOR(app.<~))',
  // 3. Families: a merge join's ordering operator, a sort's comparator, a hash join's hash function.
  'CREATE OPERATOR app.<# (leftarg = int, rightarg = int, function = app.evil_bool)',
  'CREATE OPERATOR app.=# (leftarg = int, rightarg = int, function = app.eq_f, merges)',
  'CREATE OPERATOR CLASS app.m_ops FOR TYPE int4 USING btree AS OPERATOR 1 app.<#, OPERATOR 2 <=, OPERATOR 3 app.=#, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 pg_catalog.btint4cmp(int4, int4)',
  'CREATE OPERATOR app.<^ (leftarg = int, rightarg = int, function = app.lt_f)',
  'CREATE OPERATOR CLASS app.s_ops FOR TYPE int4 USING btree AS OPERATOR 1 app.<^, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 app.evil_cmp(int4, int4)',
  'CREATE OPERATOR app.=% (leftarg = int, rightarg = int, function = app.eq_f, hashes)',
  'CREATE OPERATOR CLASS app.h_ops FOR TYPE int4 USING hash AS OPERATOR 1 app.=%, FUNCTION 1 app.evil_hash(int4)',
  // 4. A range whose subtype class compares with a person's function.
  'CREATE OPERATOR CLASS app.evil_int_ops FOR TYPE int4 USING btree AS OPERATOR 1 <, OPERATOR 2 <=, OPERATOR 3 =, OPERATOR 4 >=, OPERATOR 5 >, FUNCTION 1 app.evil_cmp(int4, int4)',
  'CREATE TYPE app.irange AS RANGE (subtype = int4, subtype_opclass = app.evil_int_ops)',
  // 5. A partition key of that class, and one whose expression calls a person's function.
  'CREATE TABLE app.pt (id int, v text) PARTITION BY RANGE (id app.evil_int_ops)',
  'CREATE TABLE app.pt1 PARTITION OF app.pt FOR VALUES FROM (0) TO (10)',
  'CREATE TABLE app.pt2 PARTITION OF app.pt FOR VALUES FROM (10) TO (20) PARTITION BY RANGE (id)',
  'CREATE TABLE app.pt21 PARTITION OF app.pt2 FOR VALUES FROM (10) TO (20)',
  'CREATE TABLE app.pe (id int) PARTITION BY RANGE ((id + app.lim(0)))',
  'CREATE TABLE app.pe1 PARTITION OF app.pe FOR VALUES FROM (0) TO (100)',
  // 6. An inheritance child's CHECK, which constraint exclusion folds.
  'CREATE TABLE app.par (id int)',
  'CREATE TABLE app.ch (CHECK (id < app.lim(100))) INHERITS (app.par)',
  // 7. An index predicate and an index expression, which the relation cache folds.
  'CREATE TABLE app.t3 (id int)',
  'CREATE INDEX t3_part ON app.t3 (id) WHERE id > app.lim(10)',
  'CREATE VIEW app.v3 AS SELECT id FROM app.t3',
  'CREATE TABLE app.t5 (id int)',
  'CREATE INDEX t5_expr ON app.t5 ((id + app.lim(1)))',
  // 8. A statistics object's expression.
  'CREATE TABLE app.t4 (id int, v int)',
  'CREATE STATISTICS app.t4_st ON (id + app.lim(1)), v FROM app.t4',
  // What still answers: a plain table with a plain index, CHECK and statistics.
  'CREATE TABLE app.plain (id int CHECK (id > 0), v int)',
  'CREATE INDEX plain_id ON app.plain (id) WHERE id > 10',
  'CREATE STATISTICS app.plain_st ON (id + 1), v FROM app.plain',
  // As the daemon does for the walk: compiling it would take seconds for a plan that runs in milliseconds.
  'SET jit = off',
];

describe.skipIf(!available)('PostgreSQL resolve step: catalog links the planner and executor follow', { timeout: 180_000 }, () => {
  const { answer } = resolveScratch(TAG, OBJECTS);

  const refs = (relations: string[], operators: string[] = [], extra: Partial<StatementReferences> = {}): StatementReferences => ({
    relations: relations.map((r) => `"app"."${r}"`),
    functions: [],
    operators,
    readOnly: true,
    ...extra,
  });

  it.each([
    ['a negator', refs(['t'], ['<<<']), /operator <<< calls pg_cancel_backend\(\)/],
    ['a commutator', refs(['t'], ['<~']), /operator <~ calls pg_cancel_backend\(\)/],
    ["a merge join's ordering operator in the family", refs(['t'], ['=#']), /operator =# calls pg_cancel_backend\(\)/],
    ["a sort's comparator in the family", refs(['t'], ['<^']), /operator <\^ calls pg_cancel_backend\(\)/],
    ["a hash join's hash function in the family", refs(['t'], ['=%']), /operator =% calls pg_cancel_backend\(\)/],
    ["a range's subtype class, by its type", refs([], [], { types: ['irange'] }), /type irange calls pg_cancel_backend\(\)/],
    ["a range's subtype class, by its constructor", refs([], [], { functions: ['irange'] }), /irange\(\) calls pg_cancel_backend\(\)/],
    ["a multirange's range", refs([], [], { types: ['imultirange'] }), /type imultirange calls pg_cancel_backend\(\)/],
    ["a partition key's class", refs(['pt'], ['=']), /pt.* calls pg_cancel_backend\(\)/],
    ["a parent's partition key's class, for a partition that is partitioned", refs(['pt2'], ['=']), /pt2.* calls pg_cancel_backend\(\)/],
    ["a partition key's expression", refs(['pe'], ['=']), /pe.* calls pg_cancel_backend\(\)/],
    ["an inheritance child's CHECK", refs(['par'], ['=']), /par.* calls pg_cancel_backend\(\)/],
  ])('walks to %s', async (_what, references, message) => {
    expect(await answer(references, 'first')).toBe('further');
    expect(await answer(references, 'walk')).toMatch(message);
  });

  it.each([
    ["an index's predicate", 't3', /t3.* calls pg_cancel_backend\(\)/],
    ["an index's expression", 't5', /t5.* calls pg_cancel_backend\(\)/],
    ["a statistics object's expression", 't4', /t4.* calls pg_cancel_backend\(\)/],
  ])('sends a table with %s, named alone, on to the walk, which refuses it', async (_what, table, message) => {
    expect(await answer(refs([table], ['=']), 'first')).toBe('further');
    expect(await answer(refs([table], ['=']), 'view')).toBe('further');
    expect(await answer(refs([table], ['=']), 'walk')).toMatch(message);
  });

  it('sends a view over such a table on from the view stage', async () => {
    expect(await answer(refs(['v3']), 'view')).toBe('further');
    expect(await answer(refs(['v3']), 'walk')).toMatch(/v3.* calls pg_cancel_backend\(\)/);
  });

  it('finds nothing for a table whose index, CHECK and statistics use only built-ins', async () => {
    expect(await answer(refs(['plain'], ['=', '>']), 'first')).toBe('nothing');
    expect(await answer(refs(['plain'], ['=', '>']), 'walk')).toBe('nothing');
    expect(await answer(refs(['t'], ['=', '<']), 'first')).toBe('nothing');
  });
});

/**
 * A link written into a built-in operator's row: CREATE OPERATOR with `negator` or `commutator`
 * naming a built-in whose link is empty fills that link with the new operator's OID (OperatorUpd).
 * PostgreSQL 15.20 asks for ownership of the built-in, so a superuser (or a server from before that
 * check) writes it; the planner then swaps the person's operator in for NOT over the built-in, or
 * commutes a clause with it, for a statement that names only the built-in. pg_operator is per
 * database: a scratch database keeps the built-in rows of every other one untouched.
 */
const LINKED = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.a (v int[], t text)',
  "INSERT INTO app.a VALUES ('{1,2}', 'abc'), ('{3}', 'xyz')",
  "CREATE FUNCTION app.neg_fn(anyarray, anyarray) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false'",
  'CREATE OPERATOR app.!@> (leftarg = anyarray, rightarg = anyarray, function = app.neg_fn, negator = OPERATOR(pg_catalog.@>))',
  "CREATE FUNCTION app.com_fn(text, text) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false'",
  'CREATE OPERATOR app.@^ (leftarg = text, rightarg = text, function = app.com_fn, commutator = OPERATOR(pg_catalog.^@))',
  'SET jit = off',
];

describe.skipIf(!available)('PostgreSQL resolve step: a person operator linked from a built-in', { timeout: 180_000 }, () => {
  const { db, answer } = resolveScratch(`${TAG}_b`, LINKED);

  const refs = (operators: string[], extra: Partial<StatementReferences> = {}): StatementReferences => ({
    relations: ['"app"."a"'],
    functions: [],
    operators,
    readOnly: true,
    ...extra,
  });

  const links = async (): Promise<{ negate: string; com: string }> => {
    const r = await db().query(
      `SELECT (SELECT oprnegate::regoperator::text FROM pg_catalog.pg_operator WHERE oid = '@>(anyarray,anyarray)'::regoperator) AS negate,
              (SELECT oprcom::regoperator::text FROM pg_catalog.pg_operator WHERE oid = '^@(text,text)'::regoperator) AS com`,
    );
    return r?.rows[0];
  };

  it('writes the links into the built-in rows', async () => {
    expect(await links()).toEqual({ negate: 'app.!@>(anyarray,anyarray)', com: 'app.@^(text,text)' });
  });

  it('walks from the built-ins to harmless linked operators and finds nothing', async () => {
    for (const operators of [['@>'], ['^@'], ['=']]) {
      expect(await answer(refs(operators), 'first')).toBe('further');
      expect(await answer(refs(operators), 'walk')).toBe('nothing');
    }
  });

  it.each([
    ['a negator', 'neg_fn(anyarray, anyarray)', ['@>'], /operator @> calls pg_cancel_backend\(\)/],
    ['a commutator', 'com_fn(text, text)', ['^@'], /operator \^@ calls pg_cancel_backend\(\)/],
    ['a negator, for a statement naming another operator', 'neg_fn(anyarray, anyarray)', ['='], /operator @> calls pg_cancel_backend\(\)/],
    ['a commutator, for a statement naming no operator', 'com_fn(text, text)', [], /operator \^@ calls pg_cancel_backend\(\)/],
  ])("refuses a built-in's link to %s whose function ends sessions", async (_what, signature, operators, message) => {
    const [name, args] = signature.split('(') as [string, string];
    const types = args.replace(')', '').split(', ');
    const params = types.map((t, i) => `a${i} ${t}`).join(', ');
    await db().query(
      `CREATE OR REPLACE FUNCTION app.${name}(${params}) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN false; END $$`,
    );
    try {
      expect(await answer(refs(operators), 'first')).toBe('further');
      expect(await answer(refs(operators), 'walk')).toMatch(message);
    } finally {
      await db().query(`CREATE OR REPLACE FUNCTION app.${name}(${params}) RETURNS boolean LANGUAGE sql IMMUTABLE AS 'SELECT false'`);
    }
  });

  it('answers again once the operators are dropped: DROP OPERATOR clears the built-in rows', async () => {
    await db().query('DROP OPERATOR app.!@> (anyarray, anyarray)');
    await db().query('DROP OPERATOR app.@^ (text, text)');
    expect(await links()).toEqual({ negate: '0', com: '0' });
    expect(await answer(refs(['@>', '^@']), 'first')).toBe('nothing');
    expect(await answer(refs(['@>', '^@']), 'walk')).toBe('nothing');
  });
});
