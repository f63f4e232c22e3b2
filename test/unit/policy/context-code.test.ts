/**
 * On a connection whose context values are not signed, an agent may not add code to the
 * database or run code of its own: a routine's body can set a context value from strings built at
 * run time and set it back before the check after the statement. Two layers judge it: the token
 * rules (every engine) and PostgreSQL's own parser, each tested alone.
 */
import { describe, expect, test } from 'vitest';
import { codeStatement, contextCodeRule } from '../../../daemon/policy/context-code.js';
import { DIALECTS } from '../../../daemon/policy/dialects.js';
import { checkStatement } from '../../../daemon/policy/index.js';
import { lex } from '../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../daemon/policy/parser-rules.js';
import type { Engine } from '../../../shared/connection-url.js';

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
    for (const [sql, dialect, label] of CODE) expect(codeStatement(tokens(sql, dialect), dialect), sql).toBe(label);
    for (const [sql, dialect] of NOT_CODE) expect(codeStatement(tokens(sql, dialect), dialect), sql).toBeUndefined();
  });

  test("PostgreSQL's parser sees it alone, nested where the token rules do not look", () => {
    const embedded = () => ({ ok: true, kind: 'read' }) as const;
    const nested = 'CREATE SCHEMA s CREATE TRIGGER t BEFORE INSERT ON s.x FOR EACH ROW EXECUTE FUNCTION f()';
    expect(codeStatement(tokens(nested, 'postgres'), 'postgres')).toBeUndefined();
    expect(postgresParserObjection(nested, scoped('postgres'), 'write', embedded)).toMatchObject({ rule: 'context-code' });
    expect(checkStatement(nested, scoped('postgres'))).toMatchObject({ ok: false, rule: 'context-code' });
    for (const [sql, dialect] of CODE.filter(([, d]) => d === 'postgres'))
      expect(postgresParserObjection(sql, scoped(dialect), 'write', embedded), sql).toMatchObject({ rule: 'context-code' });
    expect(postgresParserObjection(nested, { dialect: 'postgres', allowWrite: true }, 'write', embedded)).toBeUndefined();
  });

  test('SQLite context values come from a function no SQL can change: its triggers stay writes', () => {
    expect(contextCodeRule(tokens('CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END', 'sqlite'), 'sqlite', true)).toBeUndefined();
  });

  test('the refusal says what to do instead, per engine', () => {
    const pg = checkStatement('DO $$BEGIN NULL; END$$', scoped('postgres'));
    expect(!pg.ok && pg.hint).toContain('--signed-context');
    const my = checkStatement('CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO SELECT 1', scoped('mysql'));
    expect(!my.ok && my.hint).not.toContain('--signed-context');
  });
});
