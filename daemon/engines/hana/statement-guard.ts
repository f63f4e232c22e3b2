import { HanactlError } from '../../../shared/errors.js';

export type StopReason = 'timeout' | 'cancelled';

export interface StatementGuardOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** How long the work may take to wind down after the server was asked to cancel it. */
  readonly graceMs: number;
  /** Cancels the running request on the server; called at most once. */
  readonly cancel: () => void;
}

/**
 * Bounds one statement in time: on the deadline or when `signal` aborts it asks the server to
 * cancel (`cancel`), then lets the work wind down for `graceMs`. Work that is still running
 * after that is abandoned (`abandoned` becomes true; the connection must then be destroyed)
 * and the caller gets QUERY_TIMEOUT or QUERY_CANCELLED at once.
 */
export class StatementGuard {
  readonly #options: StatementGuardOptions;
  #reason: StopReason | undefined;
  #abandoned = false;
  #deadline: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;
  #onStop: (() => void) | undefined;
  readonly #onAbort = (): void => this.stop('cancelled');

  constructor(options: StatementGuardOptions) {
    this.#options = options;
  }

  /** Why the statement was stopped, if it was. */
  get reason(): StopReason | undefined {
    return this.#reason;
  }

  /** True once the work was given up on while the client was still busy with it. */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /** The error a stopped statement reports. */
  stopError(
    details: { sqlState?: string; nativeCode?: string | number } = {},
    reason: StopReason | undefined = this.#reason,
  ): HanactlError {
    if (reason === 'cancelled') {
      return new HanactlError('QUERY_CANCELLED', 'The statement was cancelled before it finished; SAP HANA was asked to stop it.', details);
    }
    return new HanactlError(
      'QUERY_TIMEOUT',
      `The statement ran longer than ${this.#options.timeoutMs} ms and was cancelled on the server; narrow it or raise the timeout.`,
      details,
    );
  }

  /** Runs `work` under the deadline and signal; settles with its outcome or the stop error. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const { signal, timeoutMs } = this.#options;
    if (signal?.aborted) {
      this.#reason = 'cancelled';
      return Promise.reject(this.stopError());
    }
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void): void => {
        if (settled) return;
        settled = true;
        this.dispose();
        fn();
      };
      this.#onStop = () => {
        if (settled) return;
        this.#grace = setTimeout(() => {
          this.#abandoned = true;
          finish(() => reject(this.stopError()));
        }, this.#options.graceMs);
        this.#grace.unref();
      };
      this.#deadline = setTimeout(() => this.stop('timeout'), timeoutMs);
      this.#deadline.unref();
      signal?.addEventListener('abort', this.#onAbort, { once: true });
      let started: Promise<T>;
      try {
        started = work();
      } catch (err) {
        started = Promise.reject(err);
      }
      started.then(
        (value) => finish(() => resolve(value)),
        (err: unknown) => finish(() => reject(err)),
      );
    });
  }

  /** Stops the statement now (idempotent). */
  stop(reason: StopReason): void {
    if (this.#reason) return;
    this.#reason = reason;
    if (this.#deadline) clearTimeout(this.#deadline);
    try {
      this.#options.cancel();
    } catch {
      // The grace timer still bounds the wait.
    }
    this.#onStop?.();
  }

  /** Clears timers and the signal listener; safe to call twice. */
  dispose(): void {
    if (this.#deadline) clearTimeout(this.#deadline);
    if (this.#grace) clearTimeout(this.#grace);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
  }
}
