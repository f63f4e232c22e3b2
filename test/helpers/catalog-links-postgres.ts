/**
 * The PostgreSQL objects of the catalog-links tests: a person's code the planner or executor runs
 * for a statement that never names it, reached through a catalog link. The resolve step on a
 * scratch database (`test/integration/postgres-resolve-catalog-links.test.ts`) and through the
 * real shim (`test/e2e/resolve-catalog-links-postgres.test.ts`) read the same objects; what only
 * one of them needs is an option.
 */

/** A body that ends another session's statement: pid 0 is none, so it is harmless here, and refused by name. */
export const CANCEL = 'PERFORM pg_catalog.pg_cancel_backend(0);';

export interface CatalogLinkOptions {
  /** ANALYZE app.t, so that the estimator of `50 <~ id` reads the column's statistics and calls the commutator. */
  readonly analyze?: boolean;
  /** app.pt2 partitioned again (app.pt21 under it): a partition that is partitioned, whose parent's key class counts. */
  readonly subPartition?: boolean;
  /** The enum app.mood with a person's default btree class, and app.feel of it: DISTINCT and ORDER BY call its comparator. */
  readonly enumClass?: boolean;
  /** Rows in app.plain, for reads that answer with them. */
  readonly plainRows?: boolean;
  /** SET jit = off last, on the session that ran the set-up, as the daemon does for the walk. */
  readonly jitOff?: boolean;
}

/**
 * In schema app: an operator's negator (NOT a <<< b becomes a >>>= b), its commutator (the
 * estimator of 50 <~ id calls it on the column's statistics), the members of its operator family
 * (a merge join's ordering operator, a sort's comparator, a hash join's hash function), a range's
 * subtype class, and what the server keeps beside a table it reads: a partition key's class and
 * expression, a child's CHECK (constraint exclusion), an index's predicate and expression and a
 * statistics object's expression (the relation cache and the planner fold their constant calls).
 * Last, app.plain, whose index, CHECK and statistics use only built-ins: what still answers.
 */
export function catalogLinkObjects(options: CatalogLinkOptions = {}): string[] {
  const { analyze = false, subPartition = false, enumClass = false, plainRows = false, jitOff = false } = options;
  return [
    'CREATE SCHEMA app',
    'CREATE TABLE app.t (id int)',
    'INSERT INTO app.t SELECT g FROM generate_series(1, 100) AS g',
    ...(analyze ? ['ANALYZE app.t'] : []),
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
    ...(subPartition
      ? [
          'CREATE TABLE app.pt2 PARTITION OF app.pt FOR VALUES FROM (10) TO (20) PARTITION BY RANGE (id)',
          'CREATE TABLE app.pt21 PARTITION OF app.pt2 FOR VALUES FROM (10) TO (20)',
        ]
      : ['CREATE TABLE app.pt2 PARTITION OF app.pt FOR VALUES FROM (10) TO (20)']),
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
    // 9. A person's enum with a person's default btree class, whose comparator DISTINCT and ORDER BY call unnamed.
    ...(enumClass
      ? [
          "CREATE TYPE app.mood AS ENUM ('sad', 'ok', 'happy')",
          'CREATE FUNCTION app.mood_lt(a app.mood, b app.mood) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$ SELECT a::text < b::text $$',
          `CREATE FUNCTION app.mood_cmp(a app.mood, b app.mood) RETURNS int LANGUAGE plpgsql IMMUTABLE AS $$ BEGIN ${CANCEL} RETURN pg_catalog.bttextcmp(a::text, b::text); END $$`,
          'CREATE OPERATOR app.<@< (leftarg = app.mood, rightarg = app.mood, function = app.mood_lt)',
          'CREATE OPERATOR CLASS app.mood_ops DEFAULT FOR TYPE app.mood USING btree AS OPERATOR 1 app.<@<, FUNCTION 1 app.mood_cmp(app.mood, app.mood)',
          'CREATE TABLE app.feel (m app.mood)',
          "INSERT INTO app.feel VALUES ('ok'), ('sad')",
        ]
      : []),
    // What still answers: a plain table with a plain index, CHECK and statistics.
    'CREATE TABLE app.plain (id int CHECK (id > 0), v int)',
    ...(plainRows ? ['INSERT INTO app.plain VALUES (5, 50), (20, 200)'] : []),
    'CREATE INDEX plain_id ON app.plain (id) WHERE id > 10',
    'CREATE STATISTICS app.plain_st ON (id + 1), v FROM app.plain',
    // As the daemon does for the walk: compiling it would take seconds for a plan that runs in milliseconds.
    ...(jitOff ? ['SET jit = off'] : []),
  ];
}
