import { describe, expect, it } from 'vitest';
import { randomFraction, randomHex } from '../../../shared/random-hex.js';

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

describe('randomFraction', () => {
  it('gives numbers in [0, 1), never the same twice across many pool refills, spread over the range', () => {
    const seen = new Set<number>();
    let sum = 0;
    for (let i = 0; i < 5000; i++) {
      const x = randomFraction();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      seen.add(x);
      sum += x;
    }
    expect(seen.size).toBe(5000);
    expect(sum / 5000).toBeGreaterThan(0.45);
    expect(sum / 5000).toBeLessThan(0.55);
  });
});
