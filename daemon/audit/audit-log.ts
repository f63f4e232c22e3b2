import type { AuditRecord } from '../../shared/schemas.js';
import type { AuditEntry, AuditFilter, AuditStore } from './audit-store.js';

/** Takes one record per tool call; the call tracker depends on this, not on the log. */
export interface AuditSink {
  record(entry: AuditEntry): void;
}

export interface AuditLogOptions {
  /** A queued record is written at most this long after it arrived. */
  readonly flushIntervalMillis?: number;
  /** This many queued records are written at once, without waiting for the interval. */
  readonly batchSize?: number;
  /** Past this many unwritten records (the disk is failing), the oldest are dropped. */
  readonly maxQueued?: number;
  /** Called when a batch cannot be written; the batch is dropped so calls keep flowing. */
  readonly onError?: (err: unknown, dropped: number) => void;
}

/**
 * The audit trail's write side, off the hot path: `record` only queues. The queue is written
 * in one transaction when it reaches `batchSize` (on the next turn of the event loop) or
 * `flushIntervalMillis` after its first record, whichever comes first. Timers are unref'd;
 * `close` writes what is left. Reads flush first, so a reader sees every finished call.
 */
export class AuditLog implements AuditSink {
  readonly #store: AuditStore;
  readonly #intervalMs: number;
  readonly #batchSize: number;
  readonly #maxQueued: number;
  readonly #onError: (err: unknown, dropped: number) => void;
  #queue: AuditEntry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #closed = false;
  /** Records lost to a full queue or a failed write, since start. */
  dropped = 0;

  constructor(store: AuditStore, options: AuditLogOptions = {}) {
    this.#store = store;
    this.#intervalMs = options.flushIntervalMillis ?? 200;
    this.#batchSize = options.batchSize ?? 100;
    this.#maxQueued = options.maxQueued ?? 10_000;
    this.#onError = options.onError ?? (() => {});
  }

  /** Records waiting to be written. */
  get pending(): number {
    return this.#queue.length;
  }

  record(entry: AuditEntry): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.#maxQueued) {
      this.#queue.shift();
      this.dropped++;
    }
    this.#queue.push(entry);
    if (this.#queue.length >= this.#batchSize) {
      this.#immediate ??= setImmediate(() => this.flush());
      this.#immediate.unref();
    } else if (!this.#timer) {
      this.#timer = setTimeout(() => this.flush(), this.#intervalMs);
      this.#timer.unref();
    }
  }

  /** Writes every queued record now, in one transaction; returns how many were written. */
  flush(): number {
    clearTimeout(this.#timer);
    if (this.#immediate) clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
    const batch = this.#queue;
    if (batch.length === 0 || this.#closed) return 0;
    this.#queue = [];
    try {
      this.#store.insert(batch);
      return batch.length;
    } catch (err) {
      this.dropped += batch.length;
      this.#onError(err, batch.length);
      return 0;
    }
  }

  /** Matching records, oldest first (see AuditStore.list); flushes first. */
  list(filter: AuditFilter): AuditRecord[] {
    this.flush();
    return this.#store.list(filter);
  }

  /** Deletes records older than `cutoff`; returns how many. */
  pruneBefore(cutoff: Date): number {
    this.flush();
    return this.#store.pruneBefore(cutoff);
  }

  /** Writes what is queued and closes the file; later records are ignored. */
  close(): void {
    if (this.#closed) return;
    this.flush();
    this.#closed = true;
    this.#store.close();
  }
}
