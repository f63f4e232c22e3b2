import { describe, expect, it } from 'vitest';
import { maskCellValue } from '../../../../daemon/engines/credential-mask.js';
import { MAX_VALUE_DEPTH, toJsonValue } from '../../../../daemon/engines/values.js';

/** A JSON value nested `depth` arrays deep, as a driver parses a jsonb of that many brackets. */
const nested = (depth: number, inner: unknown = []): unknown => {
  let value = inner;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
};

/**
 * A cell may hold JSON nested thousands of levels deep (valid jsonb): the walks over a result
 * keep MAX_VALUE_DEPTH levels as structure and give the rest as its JSON text, masked as text,
 * instead of failing the read with the engine's own stack error.
 */
describe('cell values nested deeper than the walks keep', () => {
  it.each([100, 3000, 50_000])('reads %i nested arrays, the part past the limit as JSON text', (depth) => {
    const cell = maskCellValue(toJsonValue(nested(depth)));
    let at: unknown = cell;
    for (let i = 0; i < MAX_VALUE_DEPTH; i++) {
      expect(Array.isArray(at), `level ${i}`).toBe(true);
      at = (at as unknown[])[0];
    }
    // The rest, as text: compared as text, since a structure that deep is past any recursive comparison.
    const rest = depth - MAX_VALUE_DEPTH + 1;
    expect(at).toBe(`${'['.repeat(rest)}${']'.repeat(rest)}`);
  });

  it('still masks a password under a key past the limit, in the text', () => {
    const cell = maskCellValue(toJsonValue(nested(200, { user: 'a', password: 'hunter2-secret' })));
    expect(JSON.stringify(cell)).not.toContain('hunter2-secret');
  });

  it('masks a SCRAM hash past the limit', () => {
    const hash = 'SCRAM-SHA-256$4096:c2FsdHNhbHQ=$c3RvcmVka2V5:c2VydmVya2V5';
    expect(JSON.stringify(maskCellValue(toJsonValue(nested(300, hash))))).not.toContain('c3RvcmVka2V5');
  });

  it('keeps a key named __proto__ as data when masking', () => {
    const cell = maskCellValue(toJsonValue(JSON.parse('{"__proto__": {"x": 1}, "y": 2}'))) as Record<string, unknown>;
    expect(Object.keys(cell)).toEqual(['__proto__', 'y']);
    expect(Object.getPrototypeOf(cell)).toBe(Object.prototype);
  });
});
