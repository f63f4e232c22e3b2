/**
 * Token boundaries as MariaDB's lex_one_token (sql/sql_lex.cc) draws them, state by state, where
 * a reading that cut a token elsewhere would hide a keyword: `@name` runs over letters, digits,
 * `.`, `_` and `$` (MY_LEX_USER_END → MY_LEX_HOSTNAME), a name after `ident.` is read without
 * keyword lookup only when it follows the dot directly (MY_LEX_IDENT_SEP), `\N` is NULL
 * (MY_LEX_ESCAPE), `..` is one token (MY_LEX_REAL_OR_POINT) and ends a number before it
 * (MY_LEX_INT_OR_REAL). And the second layer: the words that write or read files on the host are
 * refused anywhere in the text.
 */
import { describe, expect, test } from 'vitest';
import { MYSQL_DIALECT } from '../../../../daemon/engines/mysql/mysql-dialect.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';

const readOnly = (sql: string) => checkStatement(sql, { dialect: 'mysql', allowWrite: false });
const writable = (sql: string) => checkStatement(sql, { dialect: 'mysql', allowWrite: true });
const shown = (sql: string) => lex(sql, MYSQL_DIALECT.syntax).tokens.map((t) => t.shown);

describe('MY_LEX_USER_END and MY_LEX_HOSTNAME: a user variable name runs over letters, digits, dots, _ and $', () => {
  test('@a. is one name, so the keyword after it is read as one', () => {
    expect(shown('SELECT @a. INTO x')).toEqual(['SELECT', '@', 'a.', 'INTO', 'x']);
    expect(shown('SELECT @a.b$c_1.2e5x+1')).toEqual(['SELECT', '@', 'a.b$c_1.2e5x', '+', '1']);
    expect(shown('SELECT @\'a\', @`b`, @"c", @@d, @@session.e')).toEqual([
      'SELECT',
      '@',
      "''",
      ',',
      '@',
      '""',
      ',',
      '@',
      '""',
      ',',
      '@',
      '@',
      'd',
      ',',
      '@',
      '@',
      'session',
      '.',
      'e',
    ]);
    expect(shown("GRANT SELECT ON t TO u@host.example.com, 'v'@'%'")).toContain('host.example.com');
  });

  test('INTO OUTFILE and INTO DUMPFILE after @a. are refused', () => {
    for (const sql of [
      "select 'payload' order by @a. into dumpfile '/tmp/x'",
      "select @a. into outfile '/tmp/y'",
      "select @a.b. into outfile '/tmp/y'",
      "select @1. into outfile '/tmp/y'",
      "select @$. into outfile '/tmp/y'",
      "select @a.\tinto outfile '/tmp/y'",
      "select @a./**/into outfile '/tmp/y'",
    ]) {
      expect(readOnly(sql), sql).toMatchObject({ ok: false, rule: 'host-access' });
      expect(writable(sql), sql).toMatchObject({ ok: false, rule: 'host-access' });
    }
  });

  test('INTO @mcp_... after @a. is refused as a context change', () => {
    for (const sql of ['SELECT 1 ORDER BY @a. INTO @mcp_customer_id', 'SELECT 1 FROM t ORDER BY @a.b. INTO @mcp_customer_id']) {
      expect(readOnly(sql), sql).toMatchObject({ ok: false, rule: 'session-change' });
      expect(writable(sql), sql).toMatchObject({ ok: false, rule: 'session-change' });
    }
  });

  test('a non-ASCII character right after a variable name is refused: where the name ends depends on the character set', () => {
    expect(readOnly('SELECT @aé INTO @mcp_customer_id')).toMatchObject({ ok: false });
    expect(readOnly('SELECT @a.é')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
  });

  test('plain user variables still read', () => {
    expect(readOnly('SELECT @a, @a.b, @`x y`, @@version, @@session.sql_mode')).toEqual({ ok: true, kind: 'read' });
  });
});

describe('EXECUTE IMMEDIATE runs text no check of the statement sees', () => {
  test('refused on every connection', () => {
    for (const sql of [
      "EXECUTE IMMEDIATE CONCAT('SELECT 1 INTO OUT', 'FILE ''/tmp/x''')",
      "EXECUTE IMMEDIATE 'SELECT 1'",
      "/*!EXECUTE*/ IMMEDIATE 'SELECT 1'",
    ]) {
      expect(readOnly(sql), sql).toMatchObject({ ok: false });
      expect(writable(sql), sql).toMatchObject({ ok: false, rule: 'dynamic-sql' });
    }
  });
});

describe('MY_LEX_IDENT_SEP: only a name right after the dot skips keyword lookup', () => {
  test('a keyword after a dot and a space, a tab or a comment is a keyword', () => {
    for (const sql of [
      'SELECT t. INTO @mcp_customer_id FROM t',
      'SELECT t.\nINTO @mcp_customer_id FROM t',
      'SELECT t./* c */INTO @mcp_customer_id FROM t',
      'SELECT @@x. INTO @mcp_customer_id',
      'SELECT @@session.x. INTO @mcp_customer_id',
    ])
      expect(readOnly(sql), sql).toMatchObject({ ok: false, rule: 'session-change' });
    expect(readOnly("SELECT t. INTO OUTFILE '/tmp/x' FROM t")).toMatchObject({ ok: false, rule: 'host-access' });
  });

  test('a name right after the dot is still a name, a keyword’s too', () => {
    expect(readOnly('SELECT t.into, t.`into`, s.t.update FROM s.t')).toEqual({ ok: true, kind: 'read' });
  });
});

describe('MY_LEX_ESCAPE: \\N is NULL, and what follows it is a token of its own', () => {
  test('\\Ninto is NULL INTO', () => {
    expect(shown('SELECT \\Ninto @x')).toEqual(['SELECT', '\\N', 'into', '@', 'x']);
    expect(readOnly('SELECT \\Ninto @mcp_customer_id')).toMatchObject({ ok: false, rule: 'session-change' });
    expect(readOnly('SELECT \\N')).toEqual({ ok: true, kind: 'read' });
  });
});

describe('MY_LEX_REAL_OR_POINT: .. is one token, and a number ends before it', () => {
  test('the word after .. is a keyword', () => {
    expect(shown('SELECT a..into, 1..2, 1.5')).toEqual(['SELECT', 'a', '..', 'into', ',', '1', '..', '2', ',', '1.5']);
    for (const sql of ['SELECT a..into @mcp_customer_id', 'SELECT 1..into @mcp_customer_id'])
      expect(readOnly(sql), sql).toMatchObject({ ok: false, rule: 'session-change' });
  });
});

describe('second layer: OUTFILE and DUMPFILE are refused anywhere in the text, LOAD_FILE wherever it could be a call', () => {
  test('in strings, comments, names and any ASCII case', () => {
    for (const sql of [
      "SELECT 'into outfile'",
      'SELECT 1 -- dumpfile',
      'SELECT 1 /* OutFile */',
      'SELECT `x_outfile_y` FROM t',
      "SELECT 'load_file'",
      "SELECT 'x LoAd_FiLe(y'",
      'SELECT 1 /* load_file */',
    ]) {
      const verdict = readOnly(sql);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'host-access' });
      expect(writable(sql), sql).toMatchObject({ ok: false, rule: 'host-access' });
      expect(verdict.ok === false && verdict.message, sql).toMatch(/anywhere in the text/);
      expect(verdict.ok === false && verdict.hint, sql).toMatch(/params/);
    }
  });

  test('a column named load_file still reads; a call of it is refused by the token rules first', () => {
    expect(readOnly('SELECT load_file, t.load_file AS a FROM t WHERE load_file IN (1)')).toEqual({ ok: true, kind: 'read' });
    expect(readOnly('SELECT LoAd_FiLe(0x2f6574632f686f73746e616d65)')).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('only the ASCII spelling: the server matches keywords and built-in function names in ASCII only', () => {
    // No such keyword or function for the server: an unknown variable or function, not a file.
    expect(readOnly('SELECT 1 AS outfíle')).toEqual({ ok: true, kind: 'read' });
  });

  test('other engines are not concerned', () => {
    expect(checkStatement("SELECT 'outfile'", { dialect: 'postgres', allowWrite: false })).toEqual({ ok: true, kind: 'read' });
  });
});
