import { expect } from 'vitest';
import { HanactlError } from '../../../../../shared/errors.js';

/** The HanactlError `fn` throws (failing when it returns or throws anything else). */
export function refusal(fn: () => unknown): HanactlError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return err as HanactlError;
  }
  throw new Error('expected a refusal');
}

/** The HanactlError `promise` rejects with (failing when it resolves or rejects with anything else). */
export async function rejection(promise: Promise<unknown>): Promise<HanactlError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return err as HanactlError;
  }
  throw new Error('expected a rejection');
}
