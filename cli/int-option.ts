import { InvalidArgumentError } from 'commander';

/** A commander option parser for a whole number in [min, max]; anything else is a usage error (exit 2). */
export function intOption(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
      throw new InvalidArgumentError(`use a whole number from ${min} to ${max}.`);
    }
    return n;
  };
}

/**
 * `--max-cost`: a positive plan cost (a decimal number, as the engines' estimates are), or `none`
 * to clear the limit (as `--no-max-cost` does: both give `false`).
 */
export function costOption(value: string): number | false {
  if (value.trim().toLowerCase() === 'none') return false;
  const n = Number(value);
  if (!/^\d+(\.\d+)?(e\d+)?$/i.test(value.trim()) || !Number.isFinite(n) || n <= 0 || n > 1e15) {
    throw new InvalidArgumentError('use a positive number (a plan cost, e.g. 100000), or "none" to clear the limit.');
  }
  return n;
}
