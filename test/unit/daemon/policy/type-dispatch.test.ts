/**
 * Built-in functions that take a type's OID and run that type's own code:
 * array_in, record_in, domain_in, range_in, multirange_in (and their recv forms) call the input
 * function of the element, field, base or subtype, a domain's CHECK constraints and a range's
 * canonical function. (satisfies_hash_partition, which runs a relation's code: relation-code.test.ts.)
 * The statement check answers them only when that argument is a constant naming a built-in type
 * (OID below 16384): a runtime OID or a person's type is refused, by PostgreSQL's parser check
 * and by the whole check.
 */
import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { PG_RUNS_TYPE_CODE } from '../../../../daemon/policy/pg-functions.generated.js';
import type { PolicyOptions, StatementReferences } from '../../../../daemon/policy/types.js';

const readOnly: PolicyOptions = { dialect: 'postgres', allowWrite: false };
const writable: PolicyOptions = { dialect: 'postgres', allowWrite: true };

/** The parser's check alone, as if the token rules had been fooled into calling `sql` a read. */
const parserAlone = (sql: string, options: PolicyOptions = readOnly) =>
  postgresParserObjection(sql, options, 'read', (inner) => checkStatement(inner, { ...options, allowWrite: false }));

function refused(sql: string, rule: string, pattern: RegExp): void {
  for (const options of [readOnly, writable]) {
    const verdict = checkStatement(sql, options);
    expect(verdict, sql).toMatchObject({ ok: false, rule });
    expect(verdict.ok ? '' : verdict.message).toMatch(pattern);
    expect(parserAlone(sql, options), `parser: ${sql}`).toMatchObject({ ok: false, rule });
  }
}

describe('type-dispatching input functions', () => {
  test('the dispatchers are classified from pg_proc, with the position of the OID they dispatch on', () => {
    expect(Object.keys(PG_RUNS_TYPE_CODE).sort()).toEqual([
      'array_in',
      'array_recv',
      'domain_in',
      'domain_recv',
      'multirange_in',
      'multirange_recv',
      'range_in',
      'range_recv',
      'record_in',
      'record_recv',
    ]);
    expect(PG_RUNS_TYPE_CODE.array_in).toEqual([1]);
  });

  test.each([
    "SELECT array_in('{1,2}', (SELECT oid FROM pg_type WHERE typname = 'mydomain'), -1)::text",
    "SELECT domain_in('1', t.oid, -1)::text FROM pg_type t WHERE t.typname = 'mydomain'",
    "SELECT record_in('(1)', to_regtype('mycomposite'), -1)::text",
    "SELECT range_in('[1,2]', $1, -1)::text",
    "SELECT multirange_in('{[1,2]}', 'myrange'::text::regtype, -1)::text",
    "SELECT pg_catalog.array_in('{1}', 16384 + 20, -1)::text",
    "SELECT array_in('{1}', CASE WHEN true THEN 23 END, -1)::text",
    "SELECT array_in('{1}', 'int4'::public.regtype, -1)::text",
  ])('refuses a type chosen when the statement runs: %s', (sql) => {
    refused(sql, 'dynamic-sql', /Refused: \w+\(\) runs the own code of the type .*chosen only when the statement runs/);
  });

  test.each([
    "SELECT domain_in('1', 'mydomain'::regtype, -1)::text",
    "SELECT array_in('{1}', 'public.mydomain'::regtype::oid, -1)::text",
    "SELECT record_in('(1)', CAST('mycomposite' AS regtype), -1)::text",
    "SELECT range_in('[1,2]', 16500, -1)::text",
    "SELECT array_in('{1}', '16500', -1)::text",
    "SELECT array_in('{1}', '16500'::oid, -1)::text",
    "SELECT array_in('{1}', '\"int4\"'::regtype, -1)::text",
    "SELECT record_in('(1,2)', 'pg_catalog.pg_class'::regtype, -1)::text",
    "SELECT array_in('{1}', 'public.int4'::regtype, -1)::text",
  ])('refuses a type made since initdb, or one it cannot tell is built in: %s', (sql) => {
    refused(sql, 'denied-function', /Refused: \w+\(\) runs the own code of the type .*not one PostgreSQL itself made/);
  });

  test.each([
    "SELECT array_in('{1,2}', 23, -1)::text",
    "SELECT array_in('{1,2}', '23', -1)::text",
    "SELECT array_in('{1,2}', 23::oid, -1)::text",
    "SELECT array_in('{1,2}', 'int4'::regtype, -1)::text",
    "SELECT array_in('{1,2}', 'integer'::regtype::oid, -1)::text",
    "SELECT array_in('{1,2}', 'pg_catalog.int4'::pg_catalog.regtype, -1)::text",
    "SELECT array_in('{a}', 'character varying(10)'::regtype, -1)::text",
    "SELECT array_in('{1.5}', 'double precision'::regtype, -1)::text",
    "SELECT range_in('[1,2]', 'int4range'::regtype, -1)::text",
    "SELECT array_in('{\"{1}\"}', '_int4'::regtype, -1)::text",
    "SELECT array_in('{\"{1}\"}', 'int4[]'::regtype, -1)::text",
  ])('answers a built-in type given as a constant: %s', (sql) => {
    expect(checkStatement(sql, readOnly), sql).toMatchObject({ ok: true });
    expect(parserAlone(sql), `parser: ${sql}`).toBeUndefined();
  });

  test('a dispatcher called by a Unicode-escaped name is refused, by the parser check on its own too', () => {
    const sql = 'SELECT U&"arr\\0061y_in"(\'{1}\', t.oid, -1)::text FROM pg_type t';
    expect(checkStatement(sql, readOnly)).toMatchObject({ ok: false });
    expect(parserAlone(sql)).toMatchObject({ ok: false, rule: 'dynamic-sql' });
  });

  test('a regtype constant handed to a dispatcher is a type the resolve step walks', () => {
    const verdict = checkStatement("SELECT array_in('{1,2}', 'int4'::regtype, -1)::text", readOnly, true);
    const references = (verdict.ok ? verdict.references : undefined) as StatementReferences | undefined;
    expect(references?.types).toContain('int4');
  });

  test('functions that only read a type OID or its typmod are not dispatchers', () => {
    for (const sql of [
      "SELECT format_type(t.oid, NULL) FROM pg_type t WHERE t.typname = 'mydomain'",
      "SELECT enum_in('new', t.oid)::text FROM pg_type t WHERE t.typname = 'status'",
      "SELECT numeric_in('1.5', t.oid, -1) FROM pg_type t WHERE t.typname = 'mydomain'",
      "SELECT pg_type_is_visible(t.oid) FROM pg_type t WHERE t.typname = 'mydomain'",
    ]) {
      expect(checkStatement(sql, readOnly), sql).toMatchObject({ ok: true });
    }
  });
});
