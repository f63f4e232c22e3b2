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
