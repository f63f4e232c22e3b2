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

/** A request that got no answer within its bound; the connection cannot be trusted afterwards. */
export class NoAnswerError extends Error {
  constructor(what: string, ms: number) {
    super(`SAP HANA gave no answer to ${what} within ${ms} ms.`);
    this.name = 'NoAnswerError';
  }
}

/** Like `viaCallback`, bounded by hanactl's own timer: after `ms` it rejects with NoAnswerError. */
export function viaCallbackWithin<T = void>(start: (cb: HanaCallback<T>) => void, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new NoAnswerError(what, ms)), ms);
    timer.unref();
    viaCallback(start).then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
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
