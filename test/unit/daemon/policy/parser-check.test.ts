import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { checkStatement, skeletonize } from '../../../../daemon/policy/index.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { parsePostgres } from '../../../../daemon/policy/pg-parser.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const ok = () => ({ ok: true, kind: 'read' }) as const;
/** The second check alone, as if the token rules had been fooled into calling `sql` a read. */
const second = (sql: string) => postgresParserObjection(sql, read, 'read', (inner) => checkStatement(inner, read));

describe("PostgreSQL's parser as a second, independent check", () => {
  test('sees the function the review hid behind a dollar quote, even if the token rules had not', () => {
    const named =
      "SELECT $€$ ' $€$ AS a, set_config('mcp.customer_id','B',true) AS b, (SELECT string_agg(item, ',') FROM orders) AS items --'";
    expect(second(named)).toMatchObject({ ok: false, rule: 'session-change' });
  });

  test('sees every function call: in FROM, nested, in a cast, in a subquery', () => {
    for (const sql of [
      'SELECT * FROM pg_sleep(1)',
      'SELECT * FROM ROWS FROM (generate_series(1,2), pg_sleep(1))',
      'SELECT CAST(pg_sleep(1) AS text)',
      'SELECT (SELECT max(x) FROM (SELECT lo_import($$/etc/passwd$$) AS x) s)',
      'SELECT coalesce(NULL, dblink_exec($$x$$, $$DELETE FROM t$$))',
    ]) {
      expect(second(sql), sql).toMatchObject({ ok: false, rule: 'denied-function' });
    }
  });

  test('checks SQL text handed to a function as the parser decodes it (escapes included)', () => {
    expect(second("SELECT query_to_xml(E'SELECT pg_\\x73leep(1)', true, false, '')")).toMatchObject({ ok: false, rule: 'embedded-sql' });
    expect(second("SELECT query_to_xml(U&'SELECT pg_\\0073leep(1)', true, false, '')")).toMatchObject({ ok: false, rule: 'embedded-sql' });
    expect(second("SELECT query_to_xml('SELECT 1', true, false, '')")).toBeUndefined();
  });

  test('refuses where the two checks disagree on statement boundaries or on whether it is a read', () => {
    expect(second('SELECT 1; SELECT 2')).toMatchObject({ ok: false, rule: 'checks-disagree' });
    expect(second('WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d')).toMatchObject({ ok: false, rule: 'checks-disagree' });
    expect(second('SELECT * FROM t FOR UPDATE')).toMatchObject({ ok: false, rule: 'checks-disagree' });
    expect(second('SELECT 1 INTO t2')).toMatchObject({ ok: false, rule: 'checks-disagree' });
    expect(second('EXPLAIN ANALYZE DELETE FROM t')).toMatchObject({ ok: false, rule: 'checks-disagree' });
    expect(second('SHOW search_path')).toBeUndefined();
    expect(second('TABLE t')).toBeUndefined();
  });

  test('a tree deeper than the parser can hold is a too-complex refusal, never a throw', () => {
    expect(second(`SELECT ${'('.repeat(100_000)}1${')'.repeat(100_000)}`)).toMatchObject({ ok: false, rule: 'too-complex' });
    expect(checkStatement('SELECT 1', read)).toEqual(ok());
  });
});

/** Pieces that confuse a hand-written lexer: dollar tags (non-ASCII too), escapes, nested comments, quotes. */
const PIECES = [
  'SELECT',
  ' ',
  '\n',
  '\r',
  '\t',
  '1',
  'a',
  'é',
  '€',
  '日',
  '😀',
  '$',
  '$$',
  '$a$',
  '$é$',
  '$1$',
  '$a1$',
  "'",
  "''",
  '"',
  '\\',
  "E'",
  "U&'",
  'U&"',
  " UESCAPE '!'",
  '!',
  '--',
  '/*',
  '*/',
  '/* /* */ */',
  ';',
  ',',
  '(',
  ')',
  'x$y',
  '::',
  '#',
  '@',
  "B'",
  "X'",
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 16 }).map((p) => `SELECT ${p.join('')}`);

describe('the token rules and the parser agree on statement boundaries (fuzz)', () => {
  test('where both read the text, they count the same statements', () => {
    fc.assert(
      fc.property(text, (sql) => {
        const parsed = parsePostgres(sql);
        const lexed = skeletonize(sql, 'postgres');
        if (!parsed.ok || lexed.unterminated) return;
        expect(lexed.statements.length, sql).toBe(parsed.statements.length);
      }),
      { numRuns: 3000 },
    );
  });

  test('whatever the parser sees called is seen by the rules', () => {
    const call = fc.constantFrom('pg_sleep(1)', "set_config('a','b',true)", 'lo_import($$x$$)');
    const mixed = fc.tuple(text, call, text).map(([a, c, b]) => `${a} , ${c} ${b.slice(7)}`);
    fc.assert(
      fc.property(mixed, (sql) => {
        const parsed = parsePostgres(sql);
        if (!parsed.ok || !parsed.calls.some((c) => ['pg_sleep', 'set_config', 'lo_import'].includes(c.name))) return;
        expect(checkStatement(sql, read).ok, sql).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });
});
