import { describe, expect, test } from 'vitest';
import type { Engine } from '../../../../shared/connection-url.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

/** A writable connection whose rows are separated by signed context values (nothing else refuses DDL there). */
const signed: PolicyOptions = { dialect: 'postgres', allowWrite: true, rowSeparation: true };
const unsigned: PolicyOptions = { ...signed, unsignedContext: true };
const plain: PolicyOptions = { dialect: 'postgres', allowWrite: true };
const readOnly: PolicyOptions = { dialect: 'postgres', allowWrite: false, rowSeparation: true };

const parserVerdict = (sql: string, options: PolicyOptions) =>
  postgresParserObjection(sql, options, 'write', (inner) => checkStatement(inner, { ...options, allowWrite: false }));

/**
 * Statements that change the schema or permissions: what one caller makes there every other
 * caller of the login meets (a table ahead of the person's on the search path, a function whose
 * SET clause restores the server's costs).
 */
const SCHEMA_CHANGES = [
  'CREATE FUNCTION f(v text) RETURNS bigint LANGUAGE plpgsql SET cpu_operator_cost = 0.0025 AS $$ BEGIN RETURN 1; END $$',
  'CREATE TABLE r17ctx_app.orders (id int, note text)',
  'CREATE TEMP TABLE orders (id int)',
  'CREATE VIEW v AS SELECT 1',
  'CREATE INDEX i ON t (a)',
  'CREATE SCHEMA s',
  'CREATE SEQUENCE s',
  'CREATE TABLE t2 AS SELECT 1',
  'ALTER TABLE t ADD COLUMN c int',
  'ALTER SEQUENCE s RESTART',
  'DROP TABLE t',
  'TRUNCATE t',
  'COMMENT ON TABLE t IS $$x$$',
  'GRANT SELECT ON t TO PUBLIC',
  'REVOKE SELECT ON t FROM PUBLIC',
  'CREATE DATABASE d3',
];

/** What such a connection needs: reads and writes of rows, and a person's procedures. */
const ROW_STATEMENTS = [
  'SELECT * FROM orders',
  "INSERT INTO orders (id, note) VALUES (1, 'n')",
  "UPDATE orders SET note = 'm' WHERE id = 1",
  'DELETE FROM orders WHERE id = 1',
  "MERGE INTO orders o USING (VALUES (1)) AS s(id) ON o.id = s.id WHEN MATCHED THEN UPDATE SET note = 'x'",
  'WITH n AS (INSERT INTO orders VALUES (2) RETURNING id) SELECT id FROM n',
  'CALL p(1)',
  'SHOW work_mem',
];

describe('schema changes on a writable connection whose rows are separated', () => {
  test.each(SCHEMA_CHANGES)('%s is refused by both checks, signed or not', (sql) => {
    const verdict = checkStatement(sql, signed);
    expect(verdict).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(!verdict.ok && verdict.message).toMatch(/every caller of this connection's login shares/);
    expect(!verdict.ok && verdict.hint).toMatch(/without context names|a person/);
    expect(parserVerdict(sql, signed)).toMatchObject({ ok: false, rule: 'shared-schema' });
    // Unsigned: what context-code already refuses keeps its name.
    expect(checkStatement(sql, unsigned)).toMatchObject({ ok: false });
  });

  test.each(['DO $$ BEGIN EXECUTE $q$CREATE TABLE orders (id int)$q$; END $$', 'SELECT * INTO orders2 FROM orders'])(
    '%s makes an object too: refused',
    (sql) => {
      expect(checkStatement(sql, signed)).toMatchObject({ ok: false, rule: 'shared-schema' });
    },
  );

  test('the parser check refuses SELECT ... INTO on its own', () => {
    expect(parserVerdict('SELECT * INTO orders2 FROM orders', signed)).toMatchObject({ ok: false, rule: 'shared-schema' });
  });

  test.each(ROW_STATEMENTS)('%s still answers', (sql) => {
    expect(checkStatement(sql, signed)).toMatchObject({ ok: true });
    expect(parserVerdict(sql, signed)).toBeUndefined();
  });

  test('the more specific refusals keep their names', () => {
    expect(checkStatement('ALTER VIEW v OWNER TO support', signed)).toMatchObject({ ok: false, rule: 'role-state' });
    expect(parserVerdict('ALTER VIEW v OWNER TO support', signed)).toMatchObject({ ok: false, rule: 'role-state' });
    expect(checkStatement('CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$', unsigned)).toMatchObject({
      ok: false,
      rule: 'context-code',
    });
    expect(checkStatement('EXPLAIN SELECT 1', signed)).toMatchObject({ ok: false, rule: 'planner-figures' });
  });

  test('without context names, or read-only, nothing changes', () => {
    expect(checkStatement('CREATE TABLE t (a int)', plain)).toMatchObject({ ok: true, kind: 'write' });
    expect(parserVerdict('CREATE TABLE t (a int)', plain)).toBeUndefined();
    expect(checkStatement('CREATE TABLE t (a int)', readOnly)).toMatchObject({ ok: false, rule: 'ddl' });
  });

  test.each<[Engine, string]>([
    ['mysql', 'CREATE TABLE orders (id int)'],
    ['mysql', 'CREATE DEFINER = CURRENT_USER FUNCTION f() RETURNS int RETURN 1'],
    ['sqlite', 'CREATE TABLE orders (id int)'],
    ['sqlite', 'DROP VIEW v'],
    ['hana', 'CREATE COLUMN TABLE orders (id int)'],
  ])('on %s, %s is refused as well', (dialect, sql) => {
    expect(checkStatement(sql, { dialect, allowWrite: true, rowSeparation: true })).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(checkStatement(sql, { dialect, allowWrite: true })).toMatchObject({ ok: true });
  });

  test.each<[Engine, string]>([
    ['mysql', 'INSERT INTO orders (id) VALUES (1)'],
    ['sqlite', 'UPDATE orders SET id = 2'],
    ['hana', 'DELETE FROM orders WHERE id = 1'],
  ])('on %s, %s still answers', (dialect, sql) => {
    expect(checkStatement(sql, { dialect, allowWrite: true, rowSeparation: true })).toMatchObject({ ok: true, kind: 'write' });
  });
});

describe('schema changes on a writable connection without context names whose login backs one with them', () => {
  const shared: PolicyOptions = { ...plain, sharedLogin: true };

  test.each(SCHEMA_CHANGES)('%s is refused by both checks, naming the shared login', (sql) => {
    const verdict = checkStatement(sql, shared);
    expect(verdict).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(!verdict.ok && verdict.message).toMatch(/also backs a connection with context names/);
    expect(parserVerdict(sql, shared)).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(checkStatement(sql, plain)).toMatchObject({ ok: true });
  });

  test.each([
    'EXPLAIN ANALYZE CREATE TABLE app.orders AS SELECT * FROM public.orders WHERE false',
    'EXPLAIN (ANALYZE) CREATE MATERIALIZED VIEW app.mv1 AS SELECT 1',
    'EXPLAIN (ANALYZE, VERBOSE) CREATE /* x */ TABLE t AS SELECT 1',
  ])('%s runs the schema change it wraps: refused by both checks', (sql) => {
    expect(checkStatement(sql, shared)).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(parserVerdict(sql, shared)).toMatchObject({ ok: false, rule: 'shared-schema' });
    expect(checkStatement(sql, plain)).toMatchObject({ ok: true });
  });

  test('EXPLAIN of a read or a write of rows still answers', () => {
    for (const sql of ['EXPLAIN ANALYZE SELECT * FROM orders', "EXPLAIN ANALYZE UPDATE orders SET note = 'x'"]) {
      expect(checkStatement(sql, shared), sql).toMatchObject({ ok: true });
      expect(parserVerdict(sql, shared), sql).toBeUndefined();
    }
  });

  test.each(['CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$', 'CREATE OR REPLACE VIEW v AS SELECT 2'])(
    '%s, which swaps what a separated call judged, is refused',
    (sql) => {
      expect(checkStatement(sql, shared)).toMatchObject({ ok: false, rule: 'shared-schema' });
      expect(checkStatement(sql, { ...shared, dialect: 'mysql' })).toMatchObject({ ok: false, rule: 'shared-schema' });
    },
  );

  test.each(ROW_STATEMENTS)('%s still answers', (sql) => {
    expect(checkStatement(sql, shared)).toMatchObject({ ok: true });
  });
});
