import { HanactlError } from './errors.js';

const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
const RELATIVE = /^(\d{1,6})([smhdw])$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * Reads a point in time as a person writes it on the command line: an age (`90s`, `30m`,
 * `1h`, `2d`, `1w`, counted back from `now`) or an ISO 8601 date or timestamp. Anything
 * else is INVALID_REQUEST with a sentence that shows the accepted forms.
 */
export function parseSince(text: string, now: Date = new Date()): Date {
  const trimmed = text.trim();
  const relative = RELATIVE.exec(trimmed);
  if (relative) {
    const unit = relative[2] as keyof typeof UNIT_MS;
    return new Date(now.getTime() - Number(relative[1]) * UNIT_MS[unit]);
  }
  if (ISO_DATE.test(trimmed)) {
    const at = new Date(trimmed);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new HanactlError(
    'INVALID_REQUEST',
    `Cannot read ${JSON.stringify(text)} as a time; use an age such as 30m, 1h or 2d, or an ISO date such as 2024-05-01T12:00:00Z.`,
  );
}
