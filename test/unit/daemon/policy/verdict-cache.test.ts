import { describe, expect, it } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/check-statement.js';
import type { PolicyOptions, Verdict } from '../../../../daemon/policy/types.js';
import { VerdictCache } from '../../../../daemon/policy/verdict-cache.js';
import { createStatementPolicy, loadStatementPolicy } from '../../../../daemon/policy-wiring.js';

/** A judge that counts how often it really judged. */
function counting(): { judge: (sql: string, options: PolicyOptions) => Verdict; readonly calls: number } {
  let calls = 0;
  return {
    judge: (sql, options) => {
      calls++;
      return checkStatement(sql, options);
    },
    get calls() {
      return calls;
    },
  };
}

const readOnly: PolicyOptions = { dialect: 'postgres', allowWrite: false };

describe('VerdictCache', () => {
  it('answers a statement seen before under the same options without judging it again', () => {
    const cache = new VerdictCache();
    const judge = counting();
    expect(cache.verdict('SELECT 1', readOnly, judge.judge)).toEqual({ ok: true, kind: 'read' });
    expect(cache.verdict('SELECT 1', { dialect: 'postgres', allowWrite: false }, judge.judge)).toEqual({ ok: true, kind: 'read' });
    expect(judge.calls).toBe(1);
    expect(cache.hits).toBe(1);
    // The exact text: another spacing is another statement.
    cache.verdict('SELECT  1', readOnly, judge.judge);
    expect(judge.calls).toBe(2);
  });

  it('keeps refusals as refusals', () => {
    const cache = new VerdictCache();
    const first = cache.verdict('SELECT 1; DELETE FROM t', readOnly, checkStatement);
    expect(first).toMatchObject({ ok: false, rule: 'multiple-statements' });
    expect(cache.verdict('SELECT 1; DELETE FROM t', readOnly, checkStatement)).toEqual(first);
  });

  it('never gives the verdict of a read-only connection to the same text once a person allowed writes, nor back', () => {
    const cache = new VerdictCache();
    const insert = 'INSERT INTO t VALUES (1)';
    expect(cache.verdict(insert, readOnly, checkStatement)).toMatchObject({ ok: false });
    expect(cache.verdict(insert, { dialect: 'postgres', allowWrite: true }, checkStatement)).toEqual({ ok: true, kind: 'write' });
    expect(cache.verdict(insert, readOnly, checkStatement)).toMatchObject({ ok: false });
  });

  it('judges again for unsigned context values on the connection (code the agent adds)', () => {
    const cache = new VerdictCache();
    const code = 'CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$';
    const writable: PolicyOptions = { dialect: 'postgres', allowWrite: true };
    expect(cache.verdict(code, writable, checkStatement)).toEqual({ ok: true, kind: 'write' });
    expect(cache.verdict(code, { ...writable, unsignedContext: true }, checkStatement)).toMatchObject({ ok: false });
    expect(cache.verdict(code, writable, checkStatement)).toEqual({ ok: true, kind: 'write' });
  });

  it('judges again on another engine and in another database (MySQL resolves unqualified names there)', () => {
    const cache = new VerdictCache();
    const sql = 'SELECT * FROM user';
    expect(cache.verdict(sql, { dialect: 'mysql', allowWrite: false, database: 'shop' }, checkStatement)).toEqual({
      ok: true,
      kind: 'read',
    });
    expect(cache.verdict(sql, { dialect: 'mysql', allowWrite: false, database: 'mysql' }, checkStatement)).toMatchObject({ ok: false });
    expect(cache.verdict(sql, { dialect: 'mysql', allowWrite: false }, checkStatement)).toEqual({ ok: true, kind: 'read' });
    // A database name and a text never join into another pair's key.
    const judge = counting();
    cache.verdict('x|SELECT 1', { dialect: 'mysql', allowWrite: false, database: 'a' }, judge.judge);
    cache.verdict('SELECT 1', { dialect: 'mysql', allowWrite: false, database: 'a|x' }, judge.judge);
    expect(judge.calls).toBe(2);
    expect(cache.verdict('SELECT 1', { dialect: 'sqlite', allowWrite: false }, judge.judge)).toEqual({ ok: true, kind: 'read' });
    expect(judge.calls).toBe(3);
  });

  it('holds at most its bound, dropping the least recently used first', () => {
    const cache = new VerdictCache(3);
    const judge = counting();
    for (const n of [1, 2, 3]) cache.verdict(`SELECT ${n}`, readOnly, judge.judge);
    cache.verdict('SELECT 1', readOnly, judge.judge); // used again: now the newest
    cache.verdict('SELECT 4', readOnly, judge.judge); // drops SELECT 2
    expect(cache.size).toBe(3);
    expect(judge.calls).toBe(4);
    cache.verdict('SELECT 1', readOnly, judge.judge);
    cache.verdict('SELECT 3', readOnly, judge.judge);
    expect(judge.calls).toBe(4);
    cache.verdict('SELECT 2', readOnly, judge.judge);
    expect(judge.calls).toBe(5);
    for (let n = 0; n < 100; n++) cache.verdict(`SELECT ${n}`, readOnly, judge.judge);
    expect(cache.size).toBe(3);
  });
});

describe('the daemon statement policy with its verdicts', () => {
  it('refuses, allows and refuses again the same text as the connection it runs on changes', async () => {
    await loadStatementPolicy();
    const cache = new VerdictCache();
    const policy = createStatementPolicy(undefined, cache);
    // A write names its target table, which the server resolves: the verdict's kind is compared.
    const del = 'DELETE FROM orders';
    const check = async (options: Parameters<typeof policy.check>[1]) => {
      try {
        const verdict = await policy.check(del, options);
        return typeof verdict === 'string' ? verdict : verdict.kind;
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    expect(await check({ dialect: 'postgres', allowWrite: false })).toBe('STATEMENT_REFUSED');
    expect(await check({ dialect: 'postgres', allowWrite: true })).toBe('write');
    expect(await check({ dialect: 'postgres', allowWrite: false })).toBe('STATEMENT_REFUSED');
    expect(await check({ dialect: 'postgres', allowWrite: true })).toBe('write');
    expect(cache.hits).toBe(2);
  });
});
