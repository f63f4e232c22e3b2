import { describe, expect, it } from 'vitest';
import { walkTree } from '../../../../daemon/policy/pg-tree.js';

describe('walkTree over a parse tree', () => {
  it('visits every key whose value is a node or a list, depth first in key order, through lists', () => {
    const tree = {
      SelectStmt: {
        targetList: [{ ResTarget: { val: { ColumnRef: { fields: [{ String: { sval: 'a' } }] } }, location: 7 } }],
        op: 'SETOP_NONE',
      },
    };
    const keys: string[] = [];
    walkTree(tree, 10, (key) => {
      keys.push(key);
    });
    expect(keys).toEqual(['SelectStmt', 'targetList', 'ResTarget', 'val', 'ColumnRef', 'fields', 'String']);
  });

  it('hands the visitor the child itself', () => {
    const inner = { relname: 'orders' };
    const seen: unknown[] = [];
    walkTree([{ RangeVar: inner }], 10, (key, child) => {
      if (key === 'RangeVar') seen.push(child);
    });
    expect(seen).toEqual([inner]);
    expect(seen[0]).toBe(inner);
  });

  it('stops at the first visit that returns true, and says so', () => {
    const keys: string[] = [];
    const found = walkTree({ a: { b: {} }, c: {} }, 10, (key) => {
      keys.push(key);
      return key === 'b';
    });
    expect(found).toBe(true);
    expect(keys).toEqual(['a', 'b']);
    expect(walkTree({ a: { b: {} } }, 10, () => false)).toBe(false);
  });

  it('looks into no value deeper than the limit (a list and a node are a level each)', () => {
    const keys: string[] = [];
    walkTree({ a: { b: { c: {} } } }, 1, (key) => {
      keys.push(key);
    });
    // The root is depth 0 and `a`'s node depth 1: its keys are seen, the node under `b` is not read.
    expect(keys).toEqual(['a', 'b']);
    const listed: string[] = [];
    walkTree([{ a: {} }], 0, (key) => {
      listed.push(key);
    });
    expect(listed).toEqual([]);
  });

  it('ignores scalars and null at the root', () => {
    for (const root of [undefined, null, 3, 'x', true]) expect(walkTree(root, 10, () => true)).toBe(false);
  });
});
