import type { HanaCallback } from './hana-client-types.js';

/**
 * Runs one callback-style client call as a promise. A synchronous throw (the client checks
 * arguments up front) becomes a rejection too.
 */
export function viaCallback<T = void>(start: (cb: HanaCallback<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    try {
      start((err, result) => {
        if (err) reject(err);
        else resolve(result as T);
      });
    } catch (err) {
      reject(err);
    }
  });
}

/** Like `viaCallback`, but never rejects and gives up after `ms`; for close and abort paths. */
export function settleQuietly(start: (cb: HanaCallback) => void, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    try {
      start(() => done());
    } catch {
      done();
    }
  });
}
