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
      const sql = unit.repeat(12_000);
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

/** `rows` rows of four values, as an application or a migration writes them. */
const insertRows = (rows: number): string =>
  `INSERT INTO orders (id, name, amount, placed) VALUES\n${Array.from(
    { length: rows },
    (_, i) => `(${i}, 'customer ${i}', ${i}.25, DATE '2024-01-0${(i % 9) + 1}')`,
  ).join(',\n')}`;

describe('the cost of one check is bounded before it is spent', () => {
  test('PostgreSQL: past 40,000 tokens to judge, the statement is refused, with the figure and the limit', () => {
    const verdict = checkStatement(`SELECT ${'1,'.repeat(25_000)}1`, read);
    expect(verdict).toMatchObject({
      ok: false,
      rule: 'too-complex',
      message: expect.stringMatching(/(more than )?[\d,]+ tokens to judge.*the limit is 40,000/),
    });
    expect(verdict.ok || verdict.message).toContain('Split it');
  });

  test('each reading the server could make of the text counts: backslashes that read two ways cost twice', () => {
    // Under standard_conforming_strings off, '\\' is another string: both readings are judged.
    const strings = `SELECT ${"'\\\\',".repeat(12_000)}1`;
    expect(checkStatement(strings, read)).toMatchObject({
      ok: false,
      rule: 'too-complex',
      message: expect.stringContaining('tokens to judge'),
    });
    // E'' strings read alike either way: the second reading is the first, and costs nothing to judge.
    expect(checkStatement(`SELECT ${"E'\\\\',".repeat(12_000)}1`, read)).toEqual({ ok: true, kind: 'read' });
    const mysql = `SELECT ${"'\\\\',".repeat(35_000)}1`;
    expect(checkStatement(mysql, { dialect: 'mysql', allowWrite: false })).toMatchObject({ ok: false, rule: 'too-complex' });
  });

  test('PostgreSQL: a parse tree over 1.5 MB is refused before it is read, naming its size', () => {
    const typed = `SELECT ${"int '1',".repeat(8000)}1`;
    expect(checkStatement(typed, read)).toMatchObject({
      ok: false,
      rule: 'too-complex',
      message: expect.stringMatching(/tree of [\d.]+ MB of it, over the 1\.5 MB/),
    });
  });

  test('many short SQL texts run by functions are bounded by their count, not only their length', () => {
    const calls = (n: number) => `SELECT ${Array(n).fill("query_to_xml('SELECT 1', true, false, '')").join(', ')}`;
    expect(checkStatement(calls(200), read)).toMatchObject({
      ok: false,
      rule: 'too-complex',
      message: expect.stringContaining('for each text'),
    });
    expect(checkStatement(calls(10), read)).toEqual({ ok: true, kind: 'read' });
  });

  test('large statements people write still pass', () => {
    const write = { dialect: 'postgres', allowWrite: true } as const;
    expect(checkStatement(insertRows(3000), write)).toEqual({ ok: true, kind: 'write' });
    const columns = `SELECT ${Array.from({ length: 500 }, (_, i) => `COALESCE(t.column_${i}, 0) + 1 AS c${i}`).join(',\n  ')} FROM big_table t`;
    const ctes = `WITH ${Array.from({ length: 200 }, (_, i) => `c${i} AS (SELECT id, amount * ${i} AS v FROM ${i ? `c${i - 1}` : 'orders'} WHERE amount > ${i})`).join(',\n')} SELECT * FROM c199`;
    const labels = `SELECT CASE ${Array.from({ length: 1000 }, (_, i) => `WHEN code = ${i} THEN 'label ${i}'`).join(' ')} END FROM t`;
    const filters = `SELECT * FROM t WHERE ${Array.from({ length: 1000 }, (_, i) => `a = ${i} OR b = 'x${i}'`).join(' OR ')}`;
    const list = `SELECT * FROM t WHERE id IN (${Array.from({ length: 10_000 }, (_, i) => i).join(', ')})`;
    for (const dialect of ENGINES) {
      expect(checkStatement(insertRows(3000), { dialect, allowWrite: true }), dialect).toEqual({ ok: true, kind: 'write' });
      for (const sql of [columns, ctes, labels, filters, list])
        expect(checkStatement(sql, { dialect, allowWrite: false }), `${dialect}: ${sql.slice(0, 40)}`).toEqual({ ok: true, kind: 'read' });
    }
  });
});
