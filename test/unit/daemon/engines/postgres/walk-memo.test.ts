import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED_WALKS, WalkMemo } from '../../../../../daemon/engines/postgres/postgres-walk-memo.js';

const refs = (relation: string, functions: string[] = []) => ({ relations: [`"${relation}"`], functions });

describe('WalkMemo', () => {
  it('knows a set of names once added, and only that set', () => {
    const memo = new WalkMemo();
    memo.add(refs('sessions', ['count']));
    expect(memo.has(refs('sessions', ['count']))).toBe(true);
    expect(memo.has(refs('sessions'))).toBe(false);
    expect(memo.has(refs('orders', ['count']))).toBe(false);
    expect(memo.has(undefined)).toBe(false);
  });

  it('forgets the least recently added set past its bound', () => {
    const memo = new WalkMemo();
    for (let i = 0; i < MAX_REMEMBERED_WALKS; i++) memo.add(refs(`v${i}`));
    memo.add(refs('v0')); // added again: now the most recent
    memo.add(refs('extra'));
    expect(memo.size).toBe(MAX_REMEMBERED_WALKS);
    expect(memo.has(refs('v0'))).toBe(true);
    expect(memo.has(refs('v1'))).toBe(false);
    expect(memo.has(refs('extra'))).toBe(true);
  });
});
