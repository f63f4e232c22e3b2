import { describe, expect, it } from 'vitest';
import { MAX_REMEMBERED_WALKS, WalkMemo } from '../../../../../daemon/engines/postgres/postgres-walk-memo.js';

const refs = (relation: string, functions: string[] = []) => ({ relations: [`"${relation}"`], functions });

describe('WalkMemo', () => {
  it('knows the stage a set of names reached once added, and only for that set', () => {
    const memo = new WalkMemo();
    memo.add(refs('sessions', ['count']), 'view');
    expect(memo.stage(refs('sessions', ['count']))).toBe('view');
    memo.add(refs('sessions', ['count']), 'walk');
    expect(memo.stage(refs('sessions', ['count']))).toBe('walk');
    expect(memo.stage(refs('sessions'))).toBe('first');
    expect(memo.stage(refs('orders', ['count']))).toBe('first');
    expect(memo.stage(undefined)).toBe('first');
  });

  it('forgets the least recently added set past its bound', () => {
    const memo = new WalkMemo();
    for (let i = 0; i < MAX_REMEMBERED_WALKS; i++) memo.add(refs(`v${i}`), 'walk');
    memo.add(refs('v0'), 'walk'); // added again: now the most recent
    memo.add(refs('extra'), 'walk');
    expect(memo.size).toBe(MAX_REMEMBERED_WALKS);
    expect(memo.stage(refs('v0'))).toBe('walk');
    expect(memo.stage(refs('v1'))).toBe('first');
    expect(memo.stage(refs('extra'))).toBe('walk');
  });
});
