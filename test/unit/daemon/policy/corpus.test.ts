import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { ENGINES, type Engine } from '../../../../shared/connection-url.js';
import { POLICY_CORPUS, type PolicyCase } from '../../../fixtures/policy-corpus.js';

const dialectsOf = (c: PolicyCase): readonly Engine[] => (c.dialects === 'all' ? ENGINES : c.dialects);
const casesFor = (dialect: Engine): PolicyCase[] => POLICY_CORPUS.filter((c) => dialectsOf(c).includes(dialect));
const label = (sql: string): string => {
  const one = JSON.stringify(sql);
  return one.length > 80 ? `${one.slice(0, 77)}..." (${sql.length} chars)` : one;
};

describe.each(ENGINES)('read-only %s connection', (dialect) => {
  const cases = casesFor(dialect);
  const allowed = cases.filter((c) => c.verdict === 'allow').map((c) => [label(c.sql), c] as const);
  const refused = cases.filter((c) => c.verdict === 'refuse').map((c) => [label(c.sql), c.rule, c] as const);

  test.each(allowed)('allows %s as a read', (_, c) => {
    expect(checkStatement(c.sql, { dialect, allowWrite: false })).toEqual({ ok: true, kind: 'read' });
  });

  test.each(refused)('refuses %s under rule %s', (_, rule, c) => {
    const verdict = checkStatement(c.sql, { dialect, allowWrite: false });
    expect(verdict).toMatchObject({ ok: false, rule });
  });
});

describe('the corpus', () => {
  test('falsely refuses no legitimate read (the count must be zero)', () => {
    const falselyRefused = ENGINES.flatMap((dialect) =>
      casesFor(dialect)
        .filter((c) => c.verdict === 'allow' && !checkStatement(c.sql, { dialect, allowWrite: false }).ok)
        .map((c) => `${dialect}: ${label(c.sql)}`),
    );
    expect(falselyRefused).toEqual([]);
  });

  test('holds at least 150 cases, with reads and refusals for every dialect', () => {
    expect(POLICY_CORPUS.length).toBeGreaterThanOrEqual(150);
    for (const dialect of ENGINES) {
      expect(casesFor(dialect).filter((c) => c.verdict === 'allow').length).toBeGreaterThan(20);
      expect(casesFor(dialect).filter((c) => c.verdict === 'refuse').length).toBeGreaterThan(20);
    }
  });

  test('names a rule for every refusal, and no SQL twice for the same dialects', () => {
    expect(POLICY_CORPUS.filter((c) => c.verdict === 'refuse' && !c.rule)).toEqual([]);
    const keys = POLICY_CORPUS.map((c) => `${c.sql}|${dialectsOf(c).join()}`);
    expect(keys.length).toBe(new Set(keys).size);
  });

  test('every refusal reads as a complete sentence that ends with its hint', () => {
    for (const dialect of ENGINES) {
      for (const c of casesFor(dialect).filter((k) => k.verdict === 'refuse')) {
        const verdict = checkStatement(c.sql, { dialect, allowWrite: false });
        if (verdict.ok) continue; // reported by the per-case tests
        expect(verdict.message).toMatch(/^Refused: .+\.$/s);
        expect(verdict.hint.length).toBeGreaterThan(10);
        expect(verdict.message.endsWith(verdict.hint)).toBe(true);
        expect(verdict.rule).toMatch(/^[a-z]+(-[a-z]+)*$/);
      }
    }
  });
});
