import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../daemon/policy/index.js';
import { ENGINES } from '../../../shared/connection-url.js';
import { nestedQueryToXml } from '../../fixtures/policy-corpus.js';

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
      expect(checkStatement(sql, read)).toMatchObject({ ok: false, rule: 'too-complex', message: expect.stringContaining('comments nested more than 64 deep') });
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
