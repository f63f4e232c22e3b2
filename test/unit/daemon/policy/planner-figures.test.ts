import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const on = (dialect: PolicyOptions['dialect'], allowWrite = false): PolicyOptions => ({ dialect, allowWrite, rowSeparation: true });

/**
 * On a connection that separates rows by context values, the planner's figures count the hidden
 * rows: every way of asking for a plan through the statement path is refused, by both checks.
 */
describe('plans on a connection that separates rows', () => {
  test.each([
    ['postgres', "EXPLAIN SELECT * FROM orders WHERE item >= 'zq'"],
    ['postgres', 'explain select 1'],
    ['postgres', 'EXPLAIN ANALYZE SELECT * FROM orders'],
    ['postgres', 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM orders'],
    ['postgres', 'EXPLAIN (ANALYZE true, SERIALIZE binary) SELECT * FROM orders'],
    ['postgres', 'EXPLAIN (COSTS off) SELECT * FROM orders'],
    ['postgres', 'EXPLAIN VERBOSE WITH x AS (SELECT 1) SELECT * FROM x'],
    ['postgres', 'EXPLAIN (GENERIC_PLAN) SELECT * FROM orders WHERE id = $1'],
    ['postgres', 'EXPLAIN VALUES (1)'],
    ['postgres', 'EXPLAIN TABLE orders'],
    ['postgres', "/* plan */ EXPLAIN SELECT * FROM orders WHERE item >= 'b'"],
    ['postgres', "SELECT query_to_xml('EXPLAIN SELECT * FROM orders', true, false, '')"],
    ['postgres', "SELECT * FROM query_to_xml('EXPLAIN ANALYZE SELECT 1', true, false, '')"],
    ['mysql', 'EXPLAIN SELECT * FROM orders'],
    ['mysql', 'EXPLAIN FORMAT=JSON SELECT * FROM orders'],
    ['mysql', 'EXPLAIN FORMAT=TREE SELECT * FROM orders'],
    ['mysql', 'EXPLAIN ANALYZE SELECT * FROM orders'],
    ['mysql', 'EXPLAIN EXTENDED SELECT * FROM orders'],
    ['mysql', 'DESCRIBE SELECT * FROM orders'],
    ['mysql', 'DESC SELECT * FROM orders'],
    ['mysql', 'ANALYZE SELECT * FROM orders'],
    ['mysql', 'ANALYZE FORMAT=JSON SELECT * FROM orders'],
    ['sqlite', 'EXPLAIN QUERY PLAN SELECT * FROM orders'],
    ['sqlite', 'EXPLAIN SELECT * FROM orders'],
  ] as const)('%s: %s is refused', (dialect, sql) => {
    for (const allowWrite of [false, true]) {
      const verdict = checkStatement(sql, on(dialect, allowWrite));
      expect(verdict, sql).toMatchObject({ ok: false });
      // SQL text run by a function may meet another rule first (query_to_xml runs only plain reads).
      if (!verdict.ok && !sql.includes('query_to_xml')) expect(verdict.message).toMatch(/explain_query/);
    }
  });

  test.each([
    ['mysql', 'DESCRIBE orders'],
    ['mysql', 'EXPLAIN orders'],
    ['mysql', "DESC orders 'item%'"],
    ['postgres', 'SELECT * FROM orders'],
    ['postgres', "SELECT 'EXPLAIN SELECT 1' AS words"],
  ] as const)('%s: %s (no plan) still runs', (dialect, sql) => {
    expect(checkStatement(sql, on(dialect))).toMatchObject({ ok: true });
  });

  test('MariaDB ANALYZE TABLE on a writable connection is statistics upkeep, not a plan', () => {
    expect(checkStatement('ANALYZE TABLE orders', on('mysql', true))).toMatchObject({ ok: true, kind: 'write' });
  });

  test.each([
    ['postgres', 'EXPLAIN ANALYZE SELECT * FROM orders'],
    ['postgres', 'EXPLAIN (FORMAT JSON) SELECT * FROM orders'],
    ['mysql', 'EXPLAIN FORMAT=JSON SELECT * FROM orders'],
  ] as const)('%s without context names: %s still runs (it shows nothing the role cannot read)', (dialect, sql) => {
    expect(checkStatement(sql, { dialect, allowWrite: false })).toEqual({ ok: true, kind: 'read' });
  });
});

describe("PostgreSQL's parser, the second check, on its own", () => {
  const embedded = () => ({ ok: true, kind: 'read' }) as const;
  test.each(['EXPLAIN SELECT 1', 'EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM orders', 'EXPLAIN (SERIALIZE binary) SELECT * FROM orders'])(
    '%s is refused where rows are separated',
    (sql) => {
      expect(postgresParserObjection(sql, on('postgres'), 'read', embedded)).toMatchObject({ ok: false, rule: 'planner-figures' });
      expect(postgresParserObjection(sql, { dialect: 'postgres', allowWrite: false }, 'read', embedded)).toBeUndefined();
    },
  );
});

describe("pg_class's row figures where rows are separated", () => {
  test.each([
    'SELECT relname, reltuples FROM pg_class',
    'SELECT c.relpages FROM pg_catalog.pg_class c',
    'SELECT "relallvisible" FROM pg_class',
    'SELECT (c).reltuples FROM pg_class c',
    'SELECT * FROM pg_class',
    'SELECT c.* FROM pg_class c',
    'TABLE pg_class',
    'SELECT to_jsonb(c) FROM pg_class c',
    'SELECT pg_class FROM pg_class',
    'SELECT k FROM pg_class AS c(a, b, c, d, e, f, g, h, i, j, k)',
    "SELECT query_to_xml('SELECT reltuples FROM pg_class', true, false, '')",
  ])('%s is refused', (sql) => {
    const verdict = checkStatement(sql, on('postgres'));
    expect(verdict, sql).toMatchObject({ ok: false });
    if (!sql.includes('query_to_xml')) expect(verdict).toMatchObject({ rule: 'planner-figures' });
    expect(checkStatement(sql, { dialect: 'postgres', allowWrite: false })).toMatchObject({ ok: true });
  });

  test.each([
    'SELECT relname, relkind FROM pg_class',
    "SELECT c.relname, c.relnamespace::regnamespace FROM pg_class c WHERE c.relkind = 'r'",
    'SELECT count(*) FROM pg_class',
    "SELECT o.* FROM orders o JOIN pg_class c ON c.relname = 'orders'",
  ])('%s still runs', (sql) => {
    expect(checkStatement(sql, on('postgres'))).toMatchObject({ ok: true });
  });
});
