import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { parsePostgres } from '../../../../daemon/policy/pg-parser.js';
import { parserReady } from '../../../../daemon/policy/pg-wasm.js';
import { ENGINES } from '../../../../shared/connection-url.js';
import { nestedQueryToXml } from '../../../fixtures/policy-corpus.js';

const read = { dialect: 'postgres', allowWrite: false } as const;

/** Bad input of any size or depth gets a refusal with a rule, never a throw (which would be a 5xx). */
describe('validation is bounded', () => {
  test('EXPLAIN repeated 4000 times is refused, not a stack overflow', () => {
    for (const dialect of ENGINES) {
      const verdict = checkStatement(`${'EXPLAIN '.repeat(4000)}SELECT 1`, { dialect, allowWrite: false });
      expect(verdict).toMatchObject({ ok: false, rule: 'explain-nested' });
    }
    expect(checkStatement(`${'EXPLAIN '.repeat(4000)}SELECT 1`, { dialect: 'postgres', allowWrite: true }).ok).toBeDefined();
  });

  test('SQL text run by a function, nested 18 levels deep, is refused as too complex', () => {
    const sql = nestedQueryToXml(18);
    expect(sql.length).toBeLessThan(1000);
    expect(checkStatement(sql, read)).toMatchObject({ ok: false, rule: 'too-complex' });
    expect(checkStatement(nestedQueryToXml(3), read)).toEqual({ ok: true, kind: 'read' });
  });

  test('deeply nested parentheses are refused as too complex', () => {
    for (const dialect of ENGINES) {
      const sql = `SELECT ${'('.repeat(200_000)}1${')'.repeat(200_000)}`;
      expect(checkStatement(sql, { dialect, allowWrite: false })).toMatchObject({ ok: false, rule: 'too-complex' });
    }
  });

  test('a megabyte of nested comments is refused as too complex; 64 levels are still a comment', () => {
    const megabyte = `SELECT 1 ${'/* '.repeat(350_000)}x${' */'.repeat(350_000)}`;
    expect(megabyte.length).toBeGreaterThan(1_000_000);
    const unterminated = `SELECT 1 ${'/* '.repeat(350_000)}`;
    for (const sql of [megabyte, unterminated, `SELECT 1 ${'/*'.repeat(65)}${'*/'.repeat(65)}`]) {
      expect(checkStatement(sql, read)).toMatchObject({
        ok: false,
        rule: 'too-complex',
        message: expect.stringContaining('comments nested more than 64 deep'),
      });
    }
    expect(checkStatement(`SELECT 1 ${'/*'.repeat(64)}${'*/'.repeat(64)}`, read)).toEqual({ ok: true, kind: 'read' });
    // MySQL comments do not nest: the same text is one comment and then stray text, not a deep one.
    expect(checkStatement(`SELECT 1 ${'/*'.repeat(65)}*/`, { dialect: 'mysql', allowWrite: false })).toEqual({ ok: true, kind: 'read' });
  });

  test('a megabyte of nested function calls that run SQL text is judged without a throw', () => {
    const calls = "query_to_xml('SELECT 1', ".repeat(40_000);
    const sql = `SELECT ${calls}1${')'.repeat(40_000)}`;
    expect(checkStatement(sql, read).ok).toBe(false);
  });
});

describe('statement splitting is linear', () => {
  test('HANA: a long run of statements is split once, not once per statement', () => {
    // A quadratic split takes minutes on these, which the test's timeout turns into a failure.
    for (const unit of ['SELECT 1 FROM DUMMY;', 'DO BEGIN;']) {
      const sql = unit.repeat(20_000);
      expect(checkStatement(sql, { dialect: 'hana', allowWrite: true })).toMatchObject({ ok: false, rule: 'multiple-statements' });
    }
  });
});

/** `width` calls of query_to_xml per level, `depth` levels, each level's text in its own $tN$ quotes. */
function fannedQueryToXml(depth: number, width: number): string {
  let sql = 'SELECT 1';
  for (let n = 1; n <= depth; n++) {
    const call = `query_to_xml($t${n}$${sql}$t${n}$, true, false, '')`;
    sql = `SELECT ${Array(width).fill(call).join(', ')}`;
  }
  return sql;
}

describe('the work of one check is bounded as a whole', () => {
  test('SQL text run by functions, fanned out at every level, is refused past its total', () => {
    const fanned = fannedQueryToXml(3, 16);
    expect(fanned.length).toBeLessThan(300_000);
    expect(checkStatement(fanned, read)).toMatchObject({ ok: false, rule: 'too-complex', message: expect.stringContaining('over 64 KB') });
    // The same shape, narrower, and one long inner query are still judged on what they do.
    expect(checkStatement(fannedQueryToXml(3, 2), read)).toEqual({ ok: true, kind: 'read' });
    const long = `SELECT query_to_xml($q$SELECT ${'1,'.repeat(5000)}1$q$, true, false, '')`;
    expect(checkStatement(long, read)).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement(long.replace('SELECT 1,', 'SELECT pg_sleep(1),'), read)).toMatchObject({ ok: false, rule: 'embedded-sql' });
  });

  test("long runs of operator characters, which PostgreSQL's scanner reads in quadratic time, are refused", () => {
    for (const run of ['/**/'.repeat(250_000), '+'.repeat(2000), '<+'.repeat(1000), `/*${'/*'.repeat(60)}${'*/'.repeat(61)}`.repeat(200)]) {
      expect(checkStatement(`SELECT 1 ${run} 1`, read)).toMatchObject({
        ok: false,
        rule: 'too-complex',
        message: expect.stringContaining('operator characters'),
      });
    }
    // Spaced, or inside a literal, the same characters cost the scanner nothing.
    expect(checkStatement(`SELECT 1 ${'+ '.repeat(2000)}1`, read)).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement(`SELECT '${'/**/'.repeat(250_000)}'`, read)).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement(`SELECT 1 /*${'*'.repeat(200)}*/ -- ${'-'.repeat(5000)}\n`, read)).toEqual({ ok: true, kind: 'read' });
    // Other engines' scanners have no such cost, and their comments do not nest.
    expect(checkStatement(`SELECT 1 ${'/**/'.repeat(250_000)}`, { dialect: 'mysql', allowWrite: false })).toEqual({
      ok: true,
      kind: 'read',
    });
  });

  test('a megabyte string of doubled quotes and a megabyte-long name are judged as what they are', () => {
    for (const dialect of ENGINES) {
      const quotes = `SELECT '${"''".repeat(500_000)}'`;
      expect(checkStatement(quotes, { dialect, allowWrite: false })).toEqual({ ok: true, kind: 'read' });
    }
    expect(checkStatement(`SELECT query_to_xml('SELECT ''a'', ''${"''".repeat(1000)}''', true, false, '')`, read)).toEqual({
      ok: true,
      kind: 'read',
    });
    expect(checkStatement(`SELECT query_to_xml('SELECT ''a'' FROM pg_authid', true, false, '')`, read)).toMatchObject({
      ok: false,
      rule: 'embedded-sql',
    });
    expect(checkStatement(`SELECT ${'a'.repeat(1_000_000)}`, read)).toMatchObject({ ok: true });
    expect(checkStatement(`SELECT * FROM ${'pg_authid'.repeat(10)}`, read)).toEqual({ ok: true, kind: 'read' });
  });
});

describe("PostgreSQL's parser is never given a tree deeper than its stack", () => {
  test('a chain of 10 000 operators is refused as too complex, and the parser still reads the next statement', () => {
    for (const chain of [`${'1+'.repeat(10_000)}1`, `a${' COLLATE "C"'.repeat(5000)}`, `${'1::int+'.repeat(10_000)}1`]) {
      expect(checkStatement(`SELECT ${chain}`, read)).toMatchObject({ ok: false, rule: 'too-complex' });
      expect(checkStatement('SELECT a, b FROM t WHERE x = 1', read)).toEqual({ ok: true, kind: 'read' });
    }
  });

  test('a parse that overflows the stack anyway is refused, and the parser is replaced before the next one', async () => {
    const deep = parsePostgres(`SELECT ${'1+'.repeat(50_000)}1`);
    expect(deep).toMatchObject({ ok: false, failure: 'broken' });
    expect(parsePostgres('SELECT 1')).toMatchObject({ ok: false, failure: 'restarting' });
    expect(checkStatement('SELECT 1', read)).toMatchObject({ ok: false, rule: 'check-unavailable' });
    await parserReady();
    for (let n = 0; n < 50; n++) expect(parsePostgres(`SELECT ${n} FROM t WHERE a IN (SELECT b FROM u)`)).toMatchObject({ ok: true });
  });
});
