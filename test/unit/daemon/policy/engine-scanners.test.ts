import { describe, expect, test } from 'vitest';
import { checkStatement, skeletonize } from '../../../../daemon/policy/index.js';
import type { Engine } from '../../../../shared/connection-url.js';

const readOnly = (dialect: Engine) => ({ dialect, allowWrite: false }) as const;
const verdict = (sql: string, dialect: Engine) => checkStatement(sql, readOnly(dialect));

/**
 * Each case is text an engine's own scanner reads differently from a naive lexer, so that code
 * the engine runs hid inside what looked like a string or a comment. Each was checked on the
 * real server (PostgreSQL 15, MariaDB 10.11, SQLite 3).
 */
describe('PostgreSQL: scan.l is the reference', () => {
  test('a dollar-quote tag may hold any non-ASCII character and digits after the first', () => {
    const named =
      "SELECT $€$ ' $€$ AS a, set_config('mcp.customer_id','B',true) AS b, (SELECT string_agg(item, ',') FROM orders) AS items --'";
    expect(verdict(named, 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
    for (const tag of ['$a1$', '$é$', '$_9$', '$日本$', '$😀$']) {
      expect(verdict(`SELECT ${tag} ' ${tag}, set_config('a','b',true) --'`, 'postgres')).toMatchObject({
        ok: false,
        rule: 'session-change',
      });
      expect(skeletonize(`SELECT ${tag}x;y${tag}`, 'postgres').skeleton).toBe("SELECT ''");
    }
  });

  test('non-ASCII characters belong to identifiers, never to whitespace', () => {
    // PostgreSQL reads a$t$ after a no-break space as part of the identifier, not as a dollar quote.
    const sql = "SELECT a\u00a0$t$, set_config('a','b',true) AS b FROM (SELECT 1 AS \"a\u00a0$t$\") s -- $t$";
    expect(verdict(sql, 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
    expect(skeletonize('SELECT\u2003pg_sleep(1)', 'postgres').statements[0]?.tokens.map((t) => t.text)).toEqual([
      'SELECT\u2003PG_SLEEP',
      '(',
      '1',
      ')',
    ]);
  });

  test('a line comment ends at a carriage return', () => {
    expect(verdict("SELECT 1 AS x --\r, set_config('a','b',true) AS y", 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
  });

  test("B'' and X'' literals end at the first quote", () => {
    expect(skeletonize("SELECT B'1'' ' AS x", 'postgres').statements[0]?.tokens.map((t) => t.text)).toEqual([
      'SELECT',
      '1',
      ' ',
      'AS',
      'X',
    ]);
    expect(verdict("SELECT X'1'' ', set_config('a','b',true) AS b", 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
  });

  test("U&'' strings are opaque: their escapes (and UESCAPE) can spell any SQL", () => {
    const sql = "SELECT query_to_xml(U&'SELECT pg\\0073leep(1)', true, false, '')";
    expect(verdict(sql, 'postgres')).toMatchObject({ ok: false, rule: 'embedded-sql' });
    const uescape = "SELECT query_to_xml(U&'SELECT pg!0073leep(1)' UESCAPE '!', true, false, '')";
    expect(verdict(uescape, 'postgres')).toMatchObject({ ok: false, rule: 'embedded-sql' });
  });

  test('checks under standard_conforming_strings off as well as on', () => {
    // Off: 'a\' ends at the second quote, so set_config is code.
    expect(verdict("SELECT 'a\\', set_config('a','b',true) --'", 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
    // On: E'' reads the backslash either way.
    expect(verdict("SELECT E'\\'', set_config('a','b',true) --'", 'postgres')).toMatchObject({ ok: false, rule: 'session-change' });
    // The outer text reads alike either way (a dollar quote); the SQL text it hands to a function does not.
    const inner = "SELECT query_to_xml($q$SELECT '\\'' , pg_sleep(1) --'$q$, true, false, '')";
    expect(verdict(inner, 'postgres')).toMatchObject({ ok: false });
  });
});

describe('MariaDB and MySQL: sql_lex.cc is the reference', () => {
  test('# and -- comments end at LF only, not at a carriage return', () => {
    expect(verdict("SELECT 1 # x\r '\n, SLEEP(5) -- '", 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(verdict("SELECT 1 -- x\r '\n, SLEEP(5) -- '", 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('-- starts a comment before any control character, DEL included', () => {
    for (const c of ['\u007f', '\u0001', '\t']) {
      expect(verdict(`SELECT 1 --${c} '\n, SLEEP(5) -- '`, 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
    }
  });

  test('a versioned comment above the server version is a comment: both readings are checked', () => {
    expect(verdict("SELECT 1 /*!999999 ' */ , SLEEP(5) -- ' */", 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(verdict("SELECT 1 /*M!999999 ' */ , SLEEP(5) -- ' */", 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(verdict("SELECT 1 /*M! ' */ , SLEEP(5) -- ' */", 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
    expect(verdict('SELECT /*!32302 1, */ 2', 'mysql')).toEqual({ ok: true, kind: 'read' });
  });

  test('refuses what no single reading settles: nesting in versioned comments, mixed versions, quotes in hints', () => {
    expect(verdict('SELECT 1 /*!999999 /* x */ , 2 */', 'mysql')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
    expect(verdict('SELECT 1 /*!40000 , 2 */ /*!99999 , 3 */', 'mysql')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
    expect(verdict("SELECT /*+ ' */ 1", 'mysql')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
    expect(verdict('SELECT 1 /*! /*! 2 */ */', 'mysql')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
  });

  test('checks under ANSI_QUOTES with backslash escapes as well', () => {
    // ANSI_QUOTES: "a\" is an identifier ending at its second quote while '\'' still reads the backslash.
    expect(verdict(`SELECT '\\'' , "a\\" , SLEEP(5) -- "`, 'mysql')).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('a NUL character outside a string is refused', () => {
    expect(verdict('SELECT 1 \u0000, SLEEP(5)', 'mysql')).toMatchObject({ ok: false });
    expect(verdict('SELECT 1 -- x\u0000\n', 'mysql')).toMatchObject({ ok: false, rule: 'nul-character' });
    expect(verdict("SELECT 'a\u0000b'", 'mysql')).toEqual({ ok: true, kind: 'read' });
  });
});

describe('SQLite: tokenize.c is the reference', () => {
  test('a line comment ends at LF only', () => {
    expect(verdict("SELECT 1 -- x\r '\n, load_extension('x') -- '", 'sqlite')).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('a Tcl-style $name(...) parameter swallows what its parentheses hold', () => {
    expect(verdict("SELECT $a('x) , load_extension('evil') -- '", 'sqlite')).toMatchObject({ ok: false, rule: 'denied-function' });
  });

  test('PRAGMA [schema.]name [= value | (value)]: only reporting forms are reads', () => {
    expect(verdict('PRAGMA main.user_version = 5', 'sqlite')).toMatchObject({ ok: false, rule: 'pragma-write' });
    expect(verdict('PRAGMA user_version(5)', 'sqlite')).toMatchObject({ ok: false, rule: 'pragma-write' });
    expect(verdict('PRAGMA "main"."user_version"=5', 'sqlite')).toMatchObject({ ok: false, rule: 'pragma-write' });
    expect(verdict("PRAGMA 'user_version' = 5", 'sqlite')).toMatchObject({ ok: false, rule: 'pragma-write' });
    expect(verdict('PRAGMA main.table_info(t)', 'sqlite')).toEqual({ ok: true, kind: 'read' });
    expect(verdict('PRAGMA [main].journal_mode', 'sqlite')).toEqual({ ok: true, kind: 'read' });
  });

  test('pragma_<name> table-valued functions run the pragma with their argument: only reporting ones are reads', () => {
    // pragma.c: every pragma with a result is an eponymous virtual table; pragma_x(a) or
    // WHERE arg = a runs PRAGMA x = a, so pragma_optimize(65538) runs ANALYZE.
    const acting = [
      'SELECT * FROM pragma_optimize(65538)',
      'SELECT * FROM pragma_optimize',
      'SELECT * FROM main.pragma_optimize(65538)',
      'SELECT * FROM "pragma_optimize"(65538)',
      'SELECT * FROM [pragma_optimize]',
      'SELECT * FROM `main`.`pragma_optimize`',
      "SELECT * FROM 'pragma_optimize'",
      'SELECT * FROM PRAGMA_OPTIMIZE(1)',
      'SELECT * FROM Pragma_Wal_Checkpoint',
      'SELECT * FROM pragma_incremental_vacuum(10)',
      'SELECT * FROM pragma_shrink_memory',
      'SELECT * FROM pragma_user_version(5)',
      'SELECT * FROM pragma_user_version WHERE arg = 5',
      "SELECT * FROM pragma_journal_mode('delete')",
      'SELECT * FROM pragma_query_only(0)',
      'SELECT * FROM pragma_wal_autocheckpoint',
      'SELECT * FROM pragma_some_future_pragma',
      'SELECT (SELECT count(*) FROM pragma_optimize) AS n',
      'WITH x AS (SELECT * FROM pragma_optimize) SELECT * FROM x',
      'SELECT * FROM t JOIN pragma_optimize ON 1',
    ];
    for (const sql of acting) expect(verdict(sql, 'sqlite'), sql).toMatchObject({ ok: false, rule: 'pragma-write' });
    const reporting = [
      "SELECT * FROM pragma_table_info('t')",
      "SELECT name FROM main.pragma_table_xinfo('t')",
      "SELECT * FROM PRAGMA_INDEX_LIST('t', 'main')",
      'SELECT * FROM "pragma_table_list"',
      'SELECT * FROM pragma_integrity_check(10)',
      'SELECT * FROM pragma_foreign_key_check',
      'SELECT name FROM pragma_function_list',
      'SELECT * FROM pragma_database_list',
      'SELECT m.name, p.name FROM sqlite_schema m JOIN pragma_table_info(m.name) p',
    ];
    for (const sql of reporting) expect(verdict(sql, 'sqlite'), sql).toEqual({ ok: true, kind: 'read' });
    // A writable connection runs it, as the write it is.
    expect(checkStatement('SELECT * FROM pragma_optimize(65538)', { dialect: 'sqlite', allowWrite: true })).toMatchObject({
      ok: true,
      kind: 'write',
    });
    // A string value is not a table name.
    expect(verdict("SELECT 'pragma_optimize is a pragma' AS note", 'sqlite')).toEqual({ ok: true, kind: 'read' });
  });
});

describe('HANA', () => {
  test('a lone carriage return in a line comment is refused: where the comment ends is not known', () => {
    expect(verdict("SELECT 1 FROM DUMMY -- x\r '\n", 'hana')).toMatchObject({ ok: false, rule: 'ambiguous-text' });
  });
});
