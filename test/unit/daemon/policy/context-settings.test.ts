/**
 * Context values (`mcp.*` settings) fixed anywhere but by hanactl's own per-call set_config, text
 * PostgreSQL's parser cannot read, and pg_settings written however it is quoted: refused by BOTH
 * checks on every connection, writable too.
 */
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { sessionChangeAnywhere } from '../../../../daemon/policy/anywhere-rules.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { postgresTokenObjection } from '../../../../daemon/policy/pg-functions.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const write = { dialect: 'postgres', allowWrite: true } as const;
const tokensOf = (sql: string) => lex(sql, DIALECTS.postgres.syntax).tokens;
const parserAlone = (sql: string, allowWrite: boolean) =>
  postgresParserObjection(sql, { dialect: 'postgres', allowWrite }, 'write', (inner) => checkStatement(inner, read));

describe('a context value fixed for a function, role, database or the server', () => {
  const FORGERIES = [
    "CREATE FUNCTION public.peek() RETURNS text LANGUAGE sql SET mcp.customer_id = '2' AS $$ SELECT string_agg(secret, ',') FROM public.orders $$",
    "CREATE OR REPLACE PROCEDURE p() LANGUAGE sql SET mcp.customer_id TO '2' AS $$ SELECT 1 $$",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET \"mcp.customer_id\" = '2' AS 'SELECT 1'",
    "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET \"MCP\".Customer_Id = '2' AS 'SELECT 1'",
    'ALTER FUNCTION public.peek() SET mcp.customer_id FROM CURRENT',
    "ALTER PROCEDURE p() SET mcp.customer_id = '2'",
    "ALTER ROUTINE p() SET mcp.customer_id.sig = 'x'",
    "ALTER ROLE CURRENT_USER SET mcp.customer_id='2'",
    "ALTER USER bob IN DATABASE shop SET mcp.customer_id = '2'",
    "ALTER DATABASE shop SET mcp.customer_id = '2'",
    "ALTER SYSTEM SET mcp.customer_id = '2'",
  ];

  test.each(FORGERIES)('is refused on a writable connection by both checks: %s', (sql) => {
    // ALTER SYSTEM is refused first as server administration.
    const rule = sql.startsWith('ALTER SYSTEM') ? 'server-admin' : 'session-change';
    expect(checkStatement(sql, write)).toMatchObject({ ok: false, rule });
    expect(checkStatement(sql, read)).toMatchObject({ ok: false, rule });
    expect(parserAlone(sql, true), `parser: ${sql}`).toMatchObject({ ok: false, rule: 'session-change' });
    expect(postgresTokenObjection(tokensOf(sql), true), `tokens: ${sql}`).toMatchObject({ ok: false, rule: 'session-change' });
  });

  test('the refusal names the setting and says what to do', () => {
    const verdict = checkStatement(FORGERIES[0] as string, write);
    expect(verdict).toMatchObject({ ok: false });
    if (verdict.ok) return;
    expect(verdict.message).toMatch(/^Refused: .*mcp\.customer_id.*\.$/s);
    expect(verdict.message.endsWith(verdict.hint)).toBe(true);
  });

  test('SET and set_config of a context value are refused on every connection', () => {
    for (const sql of [
      "SET mcp.customer_id = '2'",
      "SET LOCAL mcp.customer_id = '2'",
      'SET "mcp.customer_id" TO 2',
      "SELECT set_config('mcp.customer_id', '2', true)",
      "SELECT pg_catalog.set_config('mcp.customer_id', '2', false)",
    ]) {
      expect(checkStatement(sql, write), sql).toMatchObject({ ok: false, rule: 'session-change' });
    }
  });

  test('functions and roles with other settings, and columns named mcp, stay allowed on a writable connection', () => {
    for (const sql of [
      "CREATE FUNCTION f() RETURNS int LANGUAGE sql SET search_path = pg_catalog AS 'SELECT 1'",
      "ALTER ROLE CURRENT_USER SET work_mem = '64MB'",
      'UPDATE t SET mcp = 1',
      'UPDATE mcp SET customer_id = 2',
    ]) {
      expect(checkStatement(sql, write), sql).toEqual({ ok: true, kind: 'write' });
    }
  });
});

describe("text PostgreSQL's parser cannot read", () => {
  test("is refused with the parser's own error, not left to the token rules", () => {
    // system_user is reserved since PostgreSQL 16; a PostgreSQL 15 server reads it as an alias.
    const verdict = checkStatement('SELECT * FROM orders system_user', read);
    expect(verdict).toMatchObject({ ok: false, rule: 'parser-rejects' });
    if (verdict.ok) return;
    expect(verdict.message).toMatch(/^Refused: PostgreSQL's parser could not read this statement: syntax error at or near "system_user"/);
    expect(verdict.message.endsWith(verdict.hint)).toBe(true);
    expect(checkStatement('SELEC 1', write)).toMatchObject({ ok: false, rule: 'parser-rejects' });
  });

  test('text the parser reads is unaffected', () => {
    expect(checkStatement('SELECT * FROM orders AS system_users', read)).toEqual({ ok: true, kind: 'read' });
  });
});

describe('pg_settings written however it is named', () => {
  const UPDATES = [
    "UPDATE \"pg_settings\" SET setting='x' WHERE name='application_name'",
    "UPDATE pg_catalog.pg_settings SET setting='x' WHERE name='application_name'",
    'UPDATE "pg_catalog"."pg_settings" SET setting=\'x\' WHERE name=\'application_name\'',
    "WITH u AS (UPDATE \"pg_settings\" SET setting='x' WHERE name='application_name' RETURNING 1) SELECT * FROM u",
  ];

  test.each(UPDATES)('is refused on a writable connection by both checks: %s', (sql) => {
    expect(checkStatement(sql, write)).toMatchObject({ ok: false, rule: 'session-change' });
    expect(sessionChangeAnywhere(tokensOf(sql), DIALECTS.postgres), `tokens: ${sql}`).toMatchObject({ ok: false, rule: 'session-change' });
    expect(parserAlone(sql, true), `parser: ${sql}`).toMatchObject({ ok: false, rule: 'session-change' });
  });

  test('reading pg_settings stays a read', () => {
    expect(checkStatement('SELECT name, setting FROM "pg_settings" WHERE name = \'work_mem\'', read)).toEqual({ ok: true, kind: 'read' });
  });
});
