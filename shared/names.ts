import { HanactlError } from './errors.js';

/** Connection names: letters, digits, `-` and `_`, 1 to 64 characters. */
export const CONNECTION_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** Throws INVALID_NAME with a sentence naming the problem unless `name` is acceptable. */
export function assertConnectionName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new HanactlError('INVALID_NAME', 'A connection name is required (letters, digits, - and _, up to 64 characters).');
  }
  if (name.length > 64) {
    throw new HanactlError('INVALID_NAME', `The connection name is ${name.length} characters long; the limit is 64.`);
  }
  if (!CONNECTION_NAME_PATTERN.test(name)) {
    const bad = [...name].find((c) => !/[A-Za-z0-9_-]/.test(c)) ?? '';
    throw new HanactlError(
      'INVALID_NAME',
      `The connection name "${name}" contains ${JSON.stringify(bad)}; use only letters, digits, - and _.`,
    );
  }
}
