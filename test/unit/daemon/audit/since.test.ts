import { describe, expect, it } from 'vitest';
import { parseSince } from '../../../../shared/since.js';

const now = new Date('2024-05-10T12:00:00Z');

describe('parseSince', () => {
  it.each([
    ['90s', '2024-05-10T11:58:30.000Z'],
    ['30m', '2024-05-10T11:30:00.000Z'],
    ['1h', '2024-05-10T11:00:00.000Z'],
    ['2d', '2024-05-08T12:00:00.000Z'],
    ['1w', '2024-05-03T12:00:00.000Z'],
    [' 1h ', '2024-05-10T11:00:00.000Z'],
    ['2024-05-01T08:00:00Z', '2024-05-01T08:00:00.000Z'],
    ['2024-05-01T08:00:00+02:00', '2024-05-01T06:00:00.000Z'],
  ])('reads %s', (text, iso) => {
    expect(parseSince(text, now).toISOString()).toBe(iso);
  });

  it('reads a bare date', () => {
    expect(parseSince('2024-05-01', now).getTime()).toBe(Date.parse('2024-05-01'));
  });

  it.each(['', 'yesterday', '1y', '-1h', '10', '2024-13-45', '1h30m'])('refuses %j with the accepted forms', (text) => {
    expect(() => parseSince(text, now)).toThrow(/30m, 1h or 2d.*ISO/);
  });
});
