/**
 * On a connection whose context values are not signed, an agent may not add code to the
 * database or run code of its own: a routine's body can set a context value from strings built at
 * run time and set it back before the check after the statement. Two layers judge it: the token
 * rules (every engine) and PostgreSQL's own parser, each tested alone.
 */
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { codeStatement, contextCodeRule } from '../../../../daemon/policy/context-code.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import type { Engine } from '../../../../shared/connection-url.js';

const scoped = (dialect: Engine) => ({ dialect, allowWrite: true, unsignedContext: true });
const tokens = (sql: string, dialect: Engine) => lex(sql, DIALECTS[dialect].syntax, 100_000).tokens;

const CODE: [string, Engine, string][] = [
  [
    "CREATE FUNCTION peek() RETURNS SETOF orders LANGUAGE plpgsql AS $$BEGIN EXECUTE 'SELECT set_'||'config(''mcp.customer_id'',''B'',true)'; RETURN QUERY SELECT * FROM orders; END$$",
    'postgres',
    'CREATE FUNCTION',
  ],
  ["create or replace function f() returns int language sql as 'select 1'", 'postgres', 'CREATE FUNCTION'],
  ['CREATE PROCEDURE p() LANGUAGE sql AS $$ SELECT 1 $$', 'postgres', 'CREATE PROCEDURE'],
  ["DO $$BEGIN EXECUTE 'SELECT 1'; END$$", 'postgres', 'DO'],
  ['CREATE TRIGGER t BEFORE INSERT ON x FOR EACH ROW EXECUTE FUNCTION f()', 'postgres', 'CREATE TRIGGER'],
  ['CREATE CONSTRAINT TRIGGER t AFTER INSERT ON x FOR EACH ROW EXECUTE FUNCTION f()', 'postgres', 'CREATE TRIGGER'],
  ['CREATE EVENT TRIGGER e ON ddl_command_start EXECUTE FUNCTION f()', 'postgres', 'CREATE EVENT TRIGGER'],
  ['CREATE RULE r AS ON SELECT TO x DO INSTEAD SELECT 1', 'postgres', 'CREATE RULE'],
  ['ALTER FUNCTION f() SECURITY DEFINER', 'postgres', 'ALTER FUNCTION'],
  ['ALTER ROUTINE f() SECURITY DEFINER', 'postgres', 'ALTER ROUTINE'],
  ['CREATE TRUSTED PROCEDURAL LANGUAGE l HANDLER h', 'postgres', 'CREATE LANGUAGE'],
  ['CREATE DEFINER=`root`@`localhost` FUNCTION f() RETURNS INT RETURN 1', 'mysql', 'CREATE FUNCTION'],
  ["CREATE DEFINER = 'app'@'%' PROCEDURE p() SELECT 1", 'mysql', 'CREATE PROCEDURE'],
  ['CREATE DEFINER = CURRENT_USER() TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1', 'mysql', 'CREATE TRIGGER'],
  ['CREATE OR REPLACE TRIGGER t BEFORE INSERT ON x FOR EACH ROW SET NEW.a = 1', 'mysql', 'CREATE TRIGGER'],
  ['CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM x', 'mysql', 'CREATE EVENT'],
  ['ALTER EVENT e DISABLE', 'mysql', 'ALTER EVENT'],
  ['CREATE PROCEDURE p() AS BEGIN SELECT 1 FROM DUMMY; END', 'hana', 'CREATE PROCEDURE'],
  ['DO BEGIN SELECT 1 FROM DUMMY; END', 'hana', 'DO'],
];

const NOT_CODE: [string, Engine][] = [
  ['CREATE VIEW v AS SELECT event, trigger, function FROM t', 'postgres'],
  ['CREATE TABLE trig (event text, "function" text)', 'postgres'],
  ['CREATE INDEX function_idx ON t (lower(a))', 'postgres'],
  ['INSERT INTO t VALUES (1)', 'postgres'],
  ['CALL refresh_totals()', 'postgres'],
  ['ALTER TABLE t ADD COLUMN event int', 'postgres'],
  ["CREATE DEFINER = 'u'@'%' SQL SECURITY DEFINER VIEW v AS SELECT event FROM t", 'mysql'],
  ['CREATE ALGORITHM = MERGE VIEW v AS SELECT 1', 'mysql'],
  ['DO 1 + 1', 'mysql'],
  ['UPDATE t SET a = 1 WHERE id = 2', 'mysql'],
];

describe('code an agent may not add or run where context values are not signed', () => {
  test.each(CODE)('%s (%s) is refused, naming %s', (sql, dialect, label) => {
    const verdict = checkStatement(sql, scoped(dialect));
    expect(verdict).toMatchObject({ ok: false, rule: 'context-code' });
    expect(!verdict.ok && verdict.message).toContain(label);
    // The same text is an ordinary write where there are no unsigned context values.
    expect(checkStatement(sql, { dialect, allowWrite: true })).toEqual({ ok: true, kind: 'write' });
  });

  test.each(NOT_CODE)('%s (%s) stays an ordinary statement', (sql, dialect) => {
    expect(checkStatement(sql, scoped(dialect)).ok).toBe(true);
  });

  test('the token rules see the code alone', () => {
    for (const [sql, dialect, label] of CODE) expect(codeStatement(tokens(sql, dialect), DIALECTS[dialect]), sql).toBe(label);
    for (const [sql, dialect] of NOT_CODE) expect(codeStatement(tokens(sql, dialect), DIALECTS[dialect]), sql).toBeUndefined();
  });

  test("PostgreSQL's parser sees it alone, nested where the token rules do not look", () => {
    const embedded = () => ({ ok: true, kind: 'read' }) as const;
    const nested = 'CREATE SCHEMA s CREATE TRIGGER t BEFORE INSERT ON s.x FOR EACH ROW EXECUTE FUNCTION f()';
    expect(codeStatement(tokens(nested, 'postgres'), DIALECTS.postgres)).toBeUndefined();
    expect(postgresParserObjection(nested, scoped('postgres'), 'write', embedded)).toMatchObject({ rule: 'context-code' });
    expect(checkStatement(nested, scoped('postgres'))).toMatchObject({ ok: false, rule: 'context-code' });
    for (const [sql, dialect] of CODE.filter(([, d]) => d === 'postgres'))
      expect(postgresParserObjection(sql, scoped(dialect), 'write', embedded), sql).toMatchObject({ rule: 'context-code' });
    expect(postgresParserObjection(nested, { dialect: 'postgres', allowWrite: true }, 'write', embedded)).toBeUndefined();
  });

  test('SQLite context values come from a function no SQL can change: its triggers stay writes', () => {
    expect(
      contextCodeRule(tokens('CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END', 'sqlite'), DIALECTS.sqlite, true),
    ).toBeUndefined();
  });

  test('the refusal says what to do instead, per engine', () => {
    const pg = checkStatement('DO $$BEGIN NULL; END$$', scoped('postgres'));
    expect(!pg.ok && pg.hint).toContain('--signed-context');
    const my = checkStatement('CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO SELECT 1', scoped('mysql'));
    expect(!my.ok && my.hint).not.toContain('--signed-context');
  });
});

/** DDL that names functions without calling them: each runs the function later, out of the checks' sight. */
const FORGE = "CREATE AGGREGATE public.forge(text, boolean) (sfunc = set_config, stype = text, initcond = 'mcp.customer_id')";
const DEFINES_CODE: [string, Engine, string][] = [
  // The review's aggregate, with a step function no rule refuses (its own, set_config, is refused everywhere).
  [
    "CREATE AGGREGATE public.forge(text, boolean) (sfunc = my_step, stype = text, initcond = 'mcp.customer_id')",
    'postgres',
    'CREATE AGGREGATE',
  ],
  ['CREATE OPERATOR === (leftarg = text, rightarg = text, function = my_eq)', 'postgres', 'CREATE OPERATOR'],
  ['CREATE CAST (text AS int) WITH FUNCTION my_cast(text)', 'postgres', 'CREATE CAST'],
  ['CREATE TYPE box2 (input = box2_in, output = box2_out)', 'postgres', 'CREATE TYPE'],
  ['CREATE DOMAIN pos AS int CHECK (VALUE > 0)', 'postgres', 'CREATE DOMAIN'],
  ['CREATE COLLATION c (provider = icu, locale = $$und$$)', 'postgres', 'CREATE COLLATION'],
  ["CREATE CONVERSION conv FOR 'UTF8' TO 'LATIN1' FROM my_conv", 'postgres', 'CREATE CONVERSION'],
  ['CREATE OPERATOR CLASS oc FOR TYPE int USING btree AS FUNCTION 1 my_cmp(int, int)', 'postgres', 'CREATE OPERATOR'],
  ['ALTER OPERATOR === (text, text) SET (restrict = my_sel)', 'postgres', 'ALTER OPERATOR'],
  ['CREATE FOREIGN TABLE ft (a int) SERVER s', 'postgres', 'CREATE FOREIGN'],
  ['ALTER DEFAULT PRIVILEGES GRANT SELECT ON TABLES TO PUBLIC', 'postgres', 'ALTER DEFAULT'],
  ['CREATE SPATIAL REFERENCE SYSTEM 4326 IDENTIFIED BY 4326', 'mysql', 'CREATE SPATIAL'],
  ['CREATE SERVER s FOREIGN DATA WRAPPER mysql OPTIONS (HOST $$h$$)', 'mysql', 'CREATE SERVER'],
  ['CREATE VIRTUAL TABLE v AT "remote"."db"."s"."t"', 'hana', 'CREATE VIRTUAL'],
];

const PLAIN_DDL: [string, Engine][] = [
  ['CREATE TABLE t (a int DEFAULT 1 CHECK (a > 0))', 'postgres'],
  ['CREATE UNLOGGED TABLE IF NOT EXISTS t (a int)', 'postgres'],
  ['CREATE TEMP TABLE t AS SELECT 1 AS a', 'postgres'],
  ['CREATE UNIQUE INDEX CONCURRENTLY i ON t (a)', 'postgres'],
  ['CREATE OR REPLACE VIEW v AS SELECT 1 AS a', 'postgres'],
  ['CREATE MATERIALIZED VIEW m AS SELECT 1 AS a', 'postgres'],
  ['CREATE SEQUENCE s', 'postgres'],
  ['ALTER SEQUENCE s RESTART', 'postgres'],
  ['CREATE SCHEMA s CREATE TABLE x (a int) CREATE VIEW y AS SELECT 1 AS b', 'postgres'],
  ['ALTER TABLE t RENAME TO u', 'postgres'],
  ['DROP AGGREGATE IF EXISTS forge(text, boolean)', 'postgres'],
  ["COMMENT ON TABLE t IS 'orders'", 'postgres'],
  ['TRUNCATE t', 'postgres'],
  ['GRANT SELECT ON t TO PUBLIC', 'postgres'],
  ['CREATE TABLE t (a INT) ENGINE=InnoDB', 'mysql'],
  ['CREATE FULLTEXT INDEX i ON t (a)', 'mysql'],
  ['ALTER TABLE t ADD COLUMN b INT', 'mysql'],
  ['CREATE DATABASE d', 'mysql'],
  ['CREATE COLUMN TABLE t (a INT)', 'hana'],
  ['CREATE GLOBAL TEMPORARY COLUMN TABLE t (a INT)', 'hana'],
];

describe('where context values are not signed, only DDL that cannot name code is allowed', () => {
  const embedded = () => ({ ok: true, kind: 'read' }) as const;

  test.each(DEFINES_CODE)('%s (%s) is refused, naming %s', (sql, dialect, label) => {
    const verdict = checkStatement(sql, scoped(dialect));
    expect(verdict).toMatchObject({ ok: false, rule: 'context-code' });
    expect(!verdict.ok && verdict.message).toContain(label);
  });

  test.each(PLAIN_DDL)('%s (%s) stays allowed', (sql, dialect) => {
    expect(checkStatement(sql, scoped(dialect))).toEqual({ ok: true, kind: 'write' });
  });

  test('the token rules refuse it alone', () => {
    for (const [sql, dialect, label] of DEFINES_CODE) {
      if (!sql.startsWith('CREATE') && !sql.startsWith('ALTER')) continue;
      expect(contextCodeRule(tokens(sql, dialect), DIALECTS[dialect], true)?.message, sql).toContain(label);
    }
    for (const [sql, dialect] of PLAIN_DDL) expect(contextCodeRule(tokens(sql, dialect), DIALECTS[dialect], true), sql).toBeUndefined();
  });

  test("PostgreSQL's parser refuses it alone, by node type, nested in CREATE SCHEMA too", () => {
    for (const [sql, dialect] of DEFINES_CODE.filter(([, d]) => d === 'postgres'))
      expect(postgresParserObjection(sql, scoped(dialect), 'write', embedded), sql).toMatchObject({ rule: 'context-code' });
    for (const [sql, dialect] of PLAIN_DDL.filter(([, d]) => d === 'postgres'))
      expect(postgresParserObjection(sql, scoped(dialect), 'write', embedded), sql).toBeUndefined();
    const nested = 'CREATE SCHEMA s CREATE TABLE x (a int) CREATE SEQUENCE q';
    expect(postgresParserObjection(nested, scoped('postgres'), 'write', embedded)).toBeUndefined();
    // CREATE SCHEMA's grammar holds only tables, views, indexes, sequences, triggers and grants; a trigger is code.
    const withTrigger = 'CREATE SCHEMA s CREATE TABLE x (a int) CREATE TRIGGER t BEFORE INSERT ON s.x FOR EACH ROW EXECUTE FUNCTION f()';
    expect(postgresParserObjection(withTrigger, scoped('postgres'), 'write', embedded)).toMatchObject({ rule: 'context-code' });
  });
});

describe('functions named without parentheses in DDL go through the function rules on every connection', () => {
  const embedded = () => ({ ok: true, kind: 'read' }) as const;
  const writable = { dialect: 'postgres' as const, allowWrite: true };
  const REFERENCES: [string, string][] = [
    [FORGE, 'set_config'],
    ["CREATE AGGREGATE a(text) (sfunc = 'set_config', stype = text)", 'set_config'],
    ['CREATE AGGREGATE a(text) (sfunc = textcat, stype = text, finalfunc = pg_catalog.set_config)', 'set_config'],
    ['CREATE AGGREGATE a(text) (sfunc = textcat, stype = text, msfunc = pg_sleep, minvfunc = textcat, mstype = text)', 'pg_sleep'],
    ['CREATE OPERATOR === (leftarg = text, rightarg = text, function = pg_catalog.set_config)', 'set_config'],
    ['CREATE OPERATOR === (leftarg = text, rightarg = text, procedure = pg_terminate_backend)', 'pg_terminate_backend'],
    ['CREATE TYPE t (input = lo_import, output = textout)', 'lo_import'],
    ['ALTER TYPE t SET (send = set_config)', 'set_config'],
    ['CREATE CAST (text AS int) WITH FUNCTION set_config(text, text, boolean)', 'set_config'],
    ["CREATE CONVERSION c FOR 'UTF8' TO 'LATIN1' FROM set_config", 'set_config'],
    ['CREATE OPERATOR CLASS c FOR TYPE int USING btree AS FUNCTION 1 set_config(text, text, boolean)', 'set_config'],
  ];

  test.each(REFERENCES)('%s is refused for %s, signed or not', (sql, name) => {
    const verdict = checkStatement(sql, writable);
    expect(verdict.ok, sql).toBe(false);
    expect(!verdict.ok && verdict.message).toContain(name);
  });

  test("PostgreSQL's parser sees each reference alone", () => {
    for (const [sql, name] of REFERENCES) {
      const refused = postgresParserObjection(sql, writable, 'write', embedded);
      expect(refused?.message, sql).toContain(name);
    }
  });

  test('the token rules see `option = name` alone', () => {
    for (const [sql, name] of REFERENCES.filter(([s, n]) => n === 'set_config' && /(func|function|send) = /.test(s))) {
      const verdict = checkStatement(sql, { ...writable, dialect: 'mysql' });
      expect(!verdict.ok && verdict.message, sql).toContain(name);
    }
  });

  test('a function a reference may name stays allowed', () => {
    const ok = 'CREATE AGGREGATE cat(text) (sfunc = textcat, stype = text)';
    expect(checkStatement(ok, writable)).toEqual({ ok: true, kind: 'write' });
    expect(checkStatement('UPDATE t SET input = output WHERE id = 1', writable)).toEqual({ ok: true, kind: 'write' });
  });
});

describe('on a read-only connection with unsigned context values', () => {
  test('code is refused by the read-only rules, which name what it is', () => {
    const readOnly = { dialect: 'postgres' as const, allowWrite: false, unsignedContext: true };
    expect(checkStatement('DO $$ BEGIN DELETE FROM t; END $$', readOnly)).toMatchObject({ ok: false, rule: 'procedure-call' });
    expect(checkStatement('CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$', readOnly)).toMatchObject({
      ok: false,
      rule: 'ddl',
    });
  });
});
