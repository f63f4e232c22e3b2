import { describe, expect, it } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { CANCEL, catalogLinkObjects } from '../helpers/catalog-links-postgres.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_rlinks_${process.pid}`;

/** Every link, a partition that is partitioned, and jit off for the step's own session. */
const OBJECTS = catalogLinkObjects({ subPartition: true, jitOff: true });

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
