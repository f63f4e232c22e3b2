import type { ErrorDetails, HanactlError } from '../../shared/errors.js';
import { type StopReason, stopError } from './stop-errors.js';

export type { StopReason } from './stop-errors.js';

/** setTimeout's ceiling (about 24.8 days); a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What one engine gives the watch: its limits and its own ways to stop a statement. */
export interface StatementWatchOptions {
  /** The call's time limit. No deadline when it is not a positive finite number. */
  readonly timeoutMs: number;
  /** How far past `timeoutMs` the deadline lies (0 by default): room for the server's own limit to fire first. */
  readonly marginMs?: number;
  readonly signal?: AbortSignal;
  /** Asks the database to stop the running statement. Its failure is ignored: the grace still bounds the wait. */
  readonly cancel?: () => Promise<void> | void;
  /** Sends `cancel` again every `repeatMs` until the watch stops (a cancel may be dropped); once when undefined. */
  readonly repeatMs?: number;
  /** How long the statement may take to end after the first cancel before `abandon` runs; never abandoned when undefined. */
  readonly graceMs?: number;
  /** Gives the connection up (closes its socket, kills its process). Runs at most once; not awaited by `stop`. */
  readonly abandon?: () => Promise<void> | void;
}

/**
 * Bounds one statement in time, the same way for every engine. On the deadline (`timeoutMs` +
 * `marginMs`) or when `signal` aborts, the statement is stopped: `cancel` goes to the database
 * at once, and again every `repeatMs` if asked; if the statement has not ended `graceMs` later,
 * `abandon` runs. The first reason wins and later ones are ignored. `stop()` ends the watch
 * when the call ends, and resolves once no cancel is on its way, so none can reach the
 * connection's next statement.
 */
export class StatementWatch {
  readonly #options: StatementWatchOptions;
  #reason: StopReason | undefined;
  #interrupted = false;
  #stopped = false;
  #abandoned = false;
  #deadline: NodeJS.Timeout | undefined;
  #repeat: NodeJS.Timeout | undefined;
  #grace: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;
  readonly #onAbandon = new Set<() => void>();
  readonly #onAbort = (): void => this.interrupt('cancelled');

  constructor(options: StatementWatchOptions) {
    this.#options = options;
    const { timeoutMs, marginMs = 0, signal } = options;
    if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
      this.#deadline = setTimeout(() => this.interrupt('timeout'), Math.min(timeoutMs + marginMs, MAX_TIMER_MS));
      this.#deadline.unref();
    }
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    if (signal?.aborted) this.#onAbort();
  }

  /** Why the statement was stopped, if it was. */
  get reason(): StopReason | undefined {
    return this.#reason;
  }

  /** The call's time limit, as the errors name it. */
  get timeoutMs(): number {
    return this.#options.timeoutMs;
  }

  /** True once the statement was stopped, with a reason or without one (`interrupt()`). */
  get interrupted(): boolean {
    return this.#interrupted;
  }

  /** True once `abandon` was called: the connection must not be used again. */
  get abandoned(): boolean {
    return this.#abandoned;
  }

  /**
   * Stops the statement now. Without a reason when the caller already has what it wants (the
   * row cap was reached) and no error is due. Does nothing after the first time or after `stop`.
   */
  interrupt(reason?: StopReason): void {
    if (this.#stopped || this.#interrupted) return;
    this.#interrupted = true;
    this.#reason = reason;
    this.#disarm();
    this.#send();
    const { repeatMs, graceMs } = this.#options;
    if (repeatMs !== undefined && this.#options.cancel) {
      this.#repeat = setInterval(() => this.#send(), repeatMs);
      this.#repeat.unref();
    }
    if (graceMs === undefined) return;
    if (graceMs <= 0) {
      this.#giveUp();
      return;
    }
    this.#grace = setTimeout(() => this.#giveUp(), graceMs);
    this.#grace.unref();
  }

  /** The error the stopped statement reports: QUERY_TIMEOUT or QUERY_CANCELLED (the timeout when no reason was given). */
  error(details: ErrorDetails = {}, reason: StopReason = this.#reason ?? 'timeout'): HanactlError {
    return stopError(reason, this.#options.timeoutMs, details);
  }

  /** Settles as `work` does, or rejects with `error()` as soon as the statement is abandoned. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.#abandoned) {
      work.catch(() => {});
      return Promise.reject(this.error());
    }
    let leave!: () => void;
    const abandoned = new Promise<never>((_, reject) => {
      leave = () => reject(this.error());
    });
    this.#onAbandon.add(leave);
    return Promise.race([work, abandoned]).finally(() => {
      this.#onAbandon.delete(leave);
      work.catch(() => {}); // abandoned first: the work's later rejection is expected
    });
  }

  /** Resolves once no cancel is on its way (a later repeat may send another until `stop`). */
  async idle(): Promise<void> {
    while (this.#inFlight) await this.#inFlight;
  }

  /** Ends the watch: no deadline, repeat or abandon after this. Resolves once no cancel is on its way. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#disarm();
    clearInterval(this.#repeat);
    clearTimeout(this.#grace);
    await this.idle();
  }

  #disarm(): void {
    clearTimeout(this.#deadline);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
  }

  #send(): void {
    const { cancel } = this.#options;
    if (!cancel || this.#inFlight || this.#stopped) return;
    let sent: Promise<void>;
    try {
      sent = Promise.resolve(cancel());
    } catch (err) {
      sent = Promise.reject(err);
    }
    const inFlight: Promise<void> = sent
      .catch(() => {})
      .finally(() => {
        if (this.#inFlight === inFlight) this.#inFlight = undefined;
      });
    this.#inFlight = inFlight;
  }

  #giveUp(): void {
    clearInterval(this.#repeat);
    if (this.#stopped || this.#abandoned) return;
    this.#abandoned = true;
    for (const leave of this.#onAbandon) leave();
    this.#onAbandon.clear();
    try {
      void Promise.resolve(this.#options.abandon?.()).catch(() => {});
    } catch {
      // A failed abandon leaves the connection broken all the same.
    }
  }
}
