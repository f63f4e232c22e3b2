/**
 * What the type-dispatch suites share (test/integration/postgres-resolve-type-dispatch.test.ts,
 * test/e2e/resolve-type-dispatch-postgres.test.ts): built-in input functions (array_in, ...) that
 * take a type's OID and run that type's own code, handed the OID of a person's domain `s.guarded`
 * whose CHECK each suite writes.
 */

/** The domain's type, found by a name only built when it runs. */
export const RUNTIME_OID = "(SELECT t.oid FROM pg_catalog.pg_type t WHERE t.typname OPERATOR(pg_catalog.=) ('guar' || 'ded'))";

/** Creates `what` with the domain's OID written into it as a number (its `%s`). */
export const withOid = (what: string): string =>
  `DO $do$ BEGIN EXECUTE pg_catalog.format('${what.replaceAll("'", "''")}', 's.guarded'::pg_catalog.regtype::pg_catalog.oid::pg_catalog.int8); END $do$`;

/**
 * Once `s.guarded` exists: views and functions that hand array_in its OID, chosen when they run
 * (`runtime_v`, `parse_sql`, `parse_atomic`) or written as a number (`const_v`, `parse_const`,
 * `parse_const_atomic`); and `parse_int`, a control that hands it a built-in type.
 */
export const GUARDED_READERS: readonly string[] = [
  `CREATE VIEW s.runtime_v AS SELECT pg_catalog.array_in('{1}', ${RUNTIME_OID}, -1)::text AS a`,
  withOid("CREATE VIEW s.const_v AS SELECT pg_catalog.array_in('{1}', %s, -1)::text AS a"),
  `CREATE FUNCTION s.parse_sql(x text) RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.array_in(x::cstring, ${RUNTIME_OID}, -1)::text $$`,
  `CREATE FUNCTION s.parse_atomic(x text) RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT pg_catalog.array_in(x::cstring, ${RUNTIME_OID}, -1)::text; END`,
  withOid(
    'CREATE FUNCTION s.parse_const(x text) RETURNS text LANGUAGE sql AS $f$ SELECT pg_catalog.array_in(x::cstring, %s, -1)::text $f$',
  ),
  withOid(
    'CREATE FUNCTION s.parse_const_atomic(x text) RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT pg_catalog.array_in(x::cstring, %s, -1)::text; END',
  ),
  "CREATE FUNCTION s.parse_int(x text) RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.array_in(x::cstring, 'int4'::pg_catalog.regtype, -1)::text $$",
];
