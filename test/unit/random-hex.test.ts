import { describe, expect, it } from 'vitest';
import { randomHex } from '../../shared/random-hex.js';

describe('randomHex', () => {
  it('gives hex of the asked length, never the same twice across many pool refills', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = randomHex(8);
      expect(id).toMatch(/^[0-9a-f]{16}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
    expect(randomHex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});
