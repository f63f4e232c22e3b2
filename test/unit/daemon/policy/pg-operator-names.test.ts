import type { A_Expr_Kind, SubLinkType } from '@pgsql/types';
import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { operatorNames } from '../../../../daemon/policy/pg-operator-names.js';
import { parseRaw } from '../../../../daemon/policy/pg-wasm.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const write = { dialect: 'postgres', allowWrite: true } as const;

/** The operator names an accepted statement hands the resolve step, sorted. */
function operatorsOf(sql: string, options: typeof read | typeof write = read): string[] {
  const verdict = checkStatement(sql, options, true);
  expect(verdict.ok, `${sql}: ${JSON.stringify(verdict)}`).toBe(true);
  return verdict.ok ? [...(verdict.references?.operators ?? [])].sort() : [];
}

/** Every value `field` takes anywhere in the parse tree of `sql`. */
function valuesOf(sql: string, field: string): string[] {
  const raw = parseRaw(sql);
  if (!raw.ok) throw new Error(raw.message);
  return [...raw.json.matchAll(new RegExp(`"${field}":"([A-Z_]+)"`, 'g'))].map((m) => m[1] as string);
}

const sorted = (names: readonly string[]): string[] => [...names].sort();

/**
 * One statement per A_Expr kind of PostgreSQL 17's parsenodes.h (the `Record` fails to compile when
 * the parser gains a kind), with the operators the server looks up by name, unqualified on the
 * search path, when it analyses that kind (parse_expr.c): transformAExprBetween builds `>=` and `<=`
 * (NOT BETWEEN: `<` and `>`; SYMMETRIC the same pair twice), transformAExprIn `=` or `<>`, and the
 * rest use the name the grammar gives them.
 */
const A_EXPR: Record<A_Expr_Kind, readonly (readonly [string, readonly string[]])[]> = {
  AEXPR_OP: [
    ["SELECT m FROM app.moods WHERE m <= 'a'", ['<=']],
    ["SELECT m FROM app.moods WHERE ROW(m, 1) < ROW('a', 2)", ['<']],
    ["SELECT m FROM app.moods WHERE m OPERATOR(public.<) 'a'", ['<']],
  ],
  AEXPR_OP_ANY: [["SELECT m FROM app.moods WHERE m = ANY (ARRAY['a'])", ['=']]],
  AEXPR_OP_ALL: [["SELECT m FROM app.moods WHERE m < ALL (ARRAY['a'])", ['<']]],
  AEXPR_DISTINCT: [["SELECT m FROM app.moods WHERE m IS DISTINCT FROM 'a'", ['=']]],
  AEXPR_NOT_DISTINCT: [["SELECT m FROM app.moods WHERE m IS NOT DISTINCT FROM 'a'", ['=']]],
  AEXPR_NULLIF: [["SELECT NULLIF(m, 'a') FROM app.moods", ['=']]],
  AEXPR_IN: [
    ["SELECT m FROM app.moods WHERE m IN ('a', 'b')", ['=']],
    ["SELECT m FROM app.moods WHERE m NOT IN ('a', 'b')", ['<>']],
  ],
  AEXPR_LIKE: [
    ["SELECT m FROM app.moods WHERE m::text LIKE 'a%' ESCAPE '!'", ['~~']],
    ["SELECT m FROM app.moods WHERE m::text NOT LIKE 'a%'", ['!~~']],
  ],
  AEXPR_ILIKE: [
    ["SELECT m FROM app.moods WHERE m::text ILIKE 'a%'", ['~~*']],
    ["SELECT m FROM app.moods WHERE m::text NOT ILIKE 'a%'", ['!~~*']],
  ],
  AEXPR_SIMILAR: [
    ["SELECT m FROM app.moods WHERE m::text SIMILAR TO 'a%'", ['~']],
    ["SELECT m FROM app.moods WHERE m::text NOT SIMILAR TO 'a%'", ['!~']],
  ],
  AEXPR_BETWEEN: [["SELECT m FROM app.moods WHERE m BETWEEN 'a' AND 'b'", ['<=', '>=']]],
  AEXPR_NOT_BETWEEN: [["SELECT m FROM app.moods WHERE m NOT BETWEEN 'a' AND 'b'", ['<', '>']]],
  AEXPR_BETWEEN_SYM: [["SELECT m FROM app.moods WHERE m BETWEEN SYMMETRIC 'a' AND 'b'", ['<=', '>=']]],
  AEXPR_NOT_BETWEEN_SYM: [["SELECT m FROM app.moods WHERE m NOT BETWEEN SYMMETRIC 'a' AND 'b'", ['<', '>']]],
};

/**
 * One statement per SubLink type of primnodes.h, with what transformSubLink looks up: `x IN
 * (SELECT ...)` and `NOT IN` are an ANY sublink with no operator name, which the server reads as `=`
 * (NOT IN is NOT of it). ROWCOMPARE, MULTIEXPR and CTE sublinks are made by analysis or the planner,
 * never by the grammar: `(a, b) < (SELECT ...)` is an A_Expr over an EXPR sublink there, and
 * `UPDATE ... SET (a, b) = (SELECT ...)` an EXPR sublink, so their statements show that form.
 */
const SUBLINK: Record<SubLinkType, readonly (readonly [string, readonly string[], ('read' | 'write')?])[]> = {
  EXISTS_SUBLINK: [['SELECT m FROM app.moods WHERE EXISTS (SELECT 1)', []]],
  ALL_SUBLINK: [["SELECT m FROM app.moods WHERE m <> ALL (SELECT 'a'::app.mood)", ['<>']]],
  ANY_SUBLINK: [
    ["SELECT m IN (SELECT 'a'::app.mood) FROM app.moods", ['=']],
    ["SELECT m FROM app.moods WHERE m NOT IN (SELECT 'a'::app.mood)", ['=']],
    ["SELECT m FROM app.moods WHERE (m, 1) IN (SELECT 'a'::app.mood, 1)", ['=']],
    ["SELECT m FROM app.moods WHERE m < ANY (SELECT 'a'::app.mood)", ['<']],
    ["SELECT m FROM app.moods WHERE m::text LIKE ANY (SELECT 'a%')", ['~~']],
  ],
  ROWCOMPARE_SUBLINK: [["SELECT m FROM app.moods WHERE (m, 1) < (SELECT 'a'::app.mood, 2)", ['<']]],
  EXPR_SUBLINK: [['SELECT (SELECT 1) FROM app.moods', []]],
  MULTIEXPR_SUBLINK: [["UPDATE app.moods SET (m, n) = (SELECT 'a'::app.mood, 1)", [], 'write']],
  ARRAY_SUBLINK: [['SELECT ARRAY(SELECT 1) FROM app.moods', []]],
  CTE_SUBLINK: [['WITH c AS (SELECT 1) SELECT * FROM c', []]],
};

describe('the operators a statement makes the server look up by name', () => {
  it.each(Object.entries(A_EXPR).flatMap(([kind, cases]) => cases.map(([sql, names]) => [kind, sql, names] as const)))(
    '%s: %s',
    (kind, sql, names) => {
      expect(valuesOf(sql, 'kind')).toContain(kind);
      expect(operatorsOf(sql)).toEqual(sorted(names));
    },
  );

  it.each(Object.entries(SUBLINK).flatMap(([type, cases]) => cases.map(([sql, names, mode]) => [type, sql, names, mode] as const)))(
    '%s: %s',
    (type, sql, names, mode) => {
      const grammarMakes = !['ROWCOMPARE_SUBLINK', 'MULTIEXPR_SUBLINK', 'CTE_SUBLINK'].includes(type);
      if (grammarMakes) expect(valuesOf(sql, 'subLinkType')).toContain(type);
      expect(operatorsOf(sql, mode === 'write' ? write : read)).toEqual(sorted(names));
    },
  );

  it.each([
    // transformJoinUsingClause compares each shared column with `=`, by name.
    ['SELECT * FROM app.moods a JOIN app.moods b USING (m)', ['=']],
    ['SELECT * FROM app.moods a NATURAL JOIN app.moods b', ['=']],
    ['SELECT * FROM app.moods a LEFT JOIN app.moods b USING (m)', ['=']],
    ['SELECT * FROM app.moods a JOIN app.moods b ON true', []],
    ['SELECT * FROM app.moods a CROSS JOIN app.moods b', []],
    // transformCaseExpr: the simple form compares with `=`.
    ["SELECT CASE m WHEN 'a' THEN 1 END FROM app.moods", ['=']],
    ['SELECT CASE WHEN m IS NULL THEN 1 END FROM app.moods', []],
    // ORDER BY ... USING names its operator; without it the type's default class decides.
    ['SELECT m FROM app.moods ORDER BY m USING >', ['>']],
    ['SELECT m FROM app.moods ORDER BY m', []],
    ['SELECT array_agg(m ORDER BY m USING <) FROM app.moods', ['<']],
    // GREATEST, LEAST, DISTINCT, GROUP BY and set operations compare through the default class, not a name.
    ["SELECT GREATEST(m, 'a'), LEAST(m, 'b') FROM app.moods", []],
    ['SELECT DISTINCT m FROM app.moods GROUP BY m UNION SELECT m FROM app.moods', []],
  ] as const)('%s', (sql, names) => {
    expect(operatorsOf(sql)).toEqual(sorted(names));
  });

  it('names an exclusion constraint’s operators, which its index build and every write call', () => {
    expect(operatorsOf('CREATE TABLE app.spans (r int4range, EXCLUDE USING gist (r WITH &&))', write)).toEqual(['&&']);
    expect(operatorsOf('ALTER TABLE app.spans ADD EXCLUDE USING gist (r WITH OPERATOR(public.&&), n WITH =)', write)).toEqual(['&&', '=']);
  });

  it('names every comparison for a kind this list does not know, and for a sublink of no name', () => {
    const unknown = operatorNames('A_Expr', { kind: 'AEXPR_FUTURE', name: [{ String: { sval: 'FUTURE' } }] });
    expect(sorted(unknown)).toEqual(sorted(['FUTURE', '=', '<>', '<', '>', '<=', '>=']));
    expect(sorted(operatorNames('SubLink', { subLinkType: 'FUTURE_SUBLINK' }))).toEqual(sorted(['=', '<>', '<', '>', '<=', '>=']));
  });
});
