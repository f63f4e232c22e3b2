/** Why a running statement is being stopped on the server. */
export type InterruptReason = 'timeout' | 'cancel' | 'cap';

/**
 * Watches one call's deadline and abort signal, and stops the statement on the server (through
 * `interrupt`, a KILL QUERY from a second connection) when either fires. A client-side timer
 * alone would leave the statement running and the connection wedged behind it.
 *
 * The first reason wins. `quiesce()` stops watching and waits for a KILL in flight, so the next
 * statement on the connection (the ROLLBACK) can never be the one the KILL hits.
 */
export class InterruptWatch {
  #reason: InterruptReason | undefined;
  #inflight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #disposed = false;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = (): void => this.fire('cancel');
  readonly #interrupt: (reason: InterruptReason) => Promise<void>;

  constructor(timeoutMs: number, signal: AbortSignal | undefined, interrupt: (reason: InterruptReason) => Promise<void>) {
    this.#interrupt = interrupt;
    this.#signal = signal;
    if (Number.isFinite(timeoutMs) && timeoutMs > 0) {
      this.#timer = setTimeout(() => this.fire('timeout'), timeoutMs);
      this.#timer.unref();
    }
    signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The reason the statement was stopped, if it was. */
  get reason(): InterruptReason | undefined {
    return this.#reason;
  }

  /** Stops the statement now (once; later reasons are ignored). */
  fire(reason: InterruptReason): void {
    if (this.#disposed || this.#reason) return;
    this.#reason = reason;
    this.#inflight = this.#interrupt(reason).catch(() => {});
  }

  /** Stops watching; resolves once no KILL is in flight. */
  async quiesce(): Promise<void> {
    this.dispose();
    await this.#inflight;
  }

  dispose(): void {
    this.#disposed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#signal?.removeEventListener('abort', this.#onAbort);
  }
}
