import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_DEPTH, MAX_MESSAGE_VALUES, overBounds, topLevelScalars } from '../../../shared/json-bounds.js';

const b = (text: string) => Buffer.from(text);
/** What the SDK's element count would say of the parsed value. */
function count(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.length + children.reduce((n: number, v) => n + count(v), 0);
}

describe('overBounds', () => {
  it('counts array elements and object members as the parsed value holds them', () => {
    for (const text of ['{}', '[]', '[{},{}]', '{"a":[1,2,[3]],"b":{"c":"x,[{"}}', ' [ 1 , [ ] , { } ] ', '"a,b"', '[["\\\\",",\\""]]']) {
      const n = count(JSON.parse(text));
      expect(overBounds(b(text), n), text).toBeUndefined();
      if (n > 0) expect(overBounds(b(text), n - 1), text).toMatch(`more than ${n - 1} values`);
    }
  });

  it('stops at the first value over the limit', () => {
    const line = `{"params":[${'{},'.repeat(3_000_000)}{}]}`;
    expect(overBounds(b(line))).toBe(`holds more than ${MAX_MESSAGE_VALUES} values (array elements and object members)`);
    expect(overBounds(b(`{"a":${'['.repeat(1_000_000)}`))).toBe(`nests arrays and objects more than ${MAX_MESSAGE_DEPTH} deep`);
    expect(overBounds(b(`{"a":${'[{"b":'.repeat(MAX_MESSAGE_DEPTH)}`))).toMatch('deep');
    expect(overBounds(b(`{"a":${'['.repeat(MAX_MESSAGE_DEPTH - 1)}${']'.repeat(MAX_MESSAGE_DEPTH - 1)}}`))).toBeUndefined();
  });

  it('skips brackets and commas inside strings, escaped quotes included', () => {
    expect(overBounds(b(`{"sql":"${'[{,\\"'.repeat(100_000)}"}`), 1, 2)).toBeUndefined();
  });
});

describe('topLevelScalars', () => {
  it('reads the id and method of a message, whatever precedes them', () => {
    const line = `{"jsonrpc":"2.0","params":{"id":9,"method":"x","a":[${'{"id":1},'.repeat(1000)}1]},"id":"r,\\"7]","method" : "tools/call"}`;
    expect(topLevelScalars(b(line), ['id', 'method'])).toEqual({ id: 'r,"7]', method: 'tools/call' });
    expect(topLevelScalars(b('{"id":12,"method":"ping"}'), ['id'])).toEqual({ id: 12 });
    expect(topLevelScalars(b('{"id":{"a":1},"method":null}'), ['id', 'method'])).toEqual({ method: null });
    expect(topLevelScalars(b('{"id":1'), ['id'])).toEqual({});
  });
});
