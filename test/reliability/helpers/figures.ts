/**
 * Every reliability suite prints its figures (calls, faults injected, errors, recovery times,
 * secret hits) in one line per fact, so a CI log shows what was exercised, not only that it passed.
 */
export function report(suite: string, figures: Record<string, unknown>): void {
  const text = Object.entries(figures)
    .map(([key, value]) => `${key}=${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
    .join(' ');
  console.log(`[reliability] ${suite}: ${text}`);
}

/** Percentile of a list of numbers (nearest rank); NaN for an empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

/** Milliseconds rounded for printing. */
export const ms = (value: number): number => Math.round(value);
