/**
 * The objects and forms of a type named like a function call, shared by the resolve step's test
 * (test/integration/postgres-resolve-type-calls.test.ts) and the end-to-end one
 * (test/e2e/resolve-type-calls-postgres.test.ts). Where no function of the name fits, PostgreSQL
 * reads `name(x)` (quoted, qualified, the array type's `_name`, attribute notation `(x).name`) as
 * a conversion to type `name` and runs the type's own code: here a domain's CHECK, directly or as
 * a field's domain in a composite.
 */

/**
 * Schema `s`, the function `evil` (public.evil(int) returning boolean, whose body each suite
 * writes), the domains whose CHECK calls it, and a person's domain with no code (`plain_d`).
 */
export function typeCallObjects(evil: string): string[] {
  return [
    'CREATE SCHEMA s',
    evil,
    'CREATE DOMAIN public.dom AS int CHECK (public.evil(VALUE))',
    'CREATE DOMAIN s.dom3 AS int CHECK (public.evil(VALUE))',
    'CREATE DOMAIN public.dd AS int CHECK (public.evil(VALUE))',
    'CREATE TYPE public.comp AS (f public.dd)',
    'CREATE DOMAIN public.dc AS public.comp',
    // Control: a person's type with no code.
    'CREATE DOMAIN public.plain_d AS int',
  ];
}

/** Each form that converts to one of those domains by call syntax, and so runs its CHECK. */
export const TYPE_CALL_FORMS: readonly string[] = [
  'SELECT dom(1)',
  'SELECT public.dom(1)',
  'SELECT "dom"(1)',
  'SELECT (1).dom',
  "SELECT _dom('{1}')",
  'SELECT s.dom3(1)',
  "SELECT dc('(1)')",
  'SELECT dom(x) FROM generate_series(1, 3) x',
];
