import { HanactlError, isHanactlError } from '../../shared/errors.js';
import type { DriverConnection } from '../engines/driver.js';
import { checkOwner } from '../policy/check-owner.js';

/** Pool settings; units are in the names, as pg-pool does. */
export interface PoolOptions {
  /** Hard cap on connections to the target, across every session. */
  readonly max: number;
  /** Connections kept warm even when idle. */
  readonly min: number;
  /** An idle connection above `min` is closed after this long. */
  readonly idleTimeoutMillis: number;
  /** A caller waits at most this long for a connection. */
  readonly acquireTimeoutMillis: number;
  /** A connection is retired after this long, however healthy. */
  readonly maxLifetimeMillis: number;
}

export const DEFAULT_POOL_OPTIONS: PoolOptions = {
  max: 10,
  min: 0,
  idleTimeoutMillis: 300_000,
  acquireTimeoutMillis: 10_000,
  maxLifetimeMillis: 3_600_000,
};

/**
 * Connections one session may hold at once in a pool of `max`: half of them, at least one, so
 * another session always finds one free. A pool of 1 or 2 lets a session hold 1; a pool of 1
 * cannot keep one free, so there sessions take turns: each call waits for the one connection, up
 * to acquireTimeoutMillis.
 */
export function perSessionShare(max: number): number {
  return Math.max(1, Math.floor(max / 2));
}

/**
 * One session's place in a pool: connections it holds (or is acquiring, or whose server session
 * its call left running and that are still ending), and its calls waiting for one of them.
 */
interface Share {
  held: number;
  /** Of `held`, the connections a call gave up whose server session is not gone yet. */
  ending: number;
  readonly line: (() => void)[];
}

/** A borrowed connection. `release(err)` destroys instead of recycling; a second release throws. */
export interface Lease {
  readonly connection: DriverConnection;
  release(err?: unknown): void;
}

interface Slot {
  readonly connection: DriverConnection;
  readonly createdAt: number;
  idleTimer?: NodeJS.Timeout;
  /** Reset since it was last lent (or never lent): the next borrower needs no reset. */
  clean: boolean;
}

/**
 * A caller waiting for a connection: in line (with its acquire timer) or while one opens for it.
 * Once `done` (served, timed out, aborted, or the pool ended), a lease handed to it goes straight back.
 */
interface Waiter {
  done: boolean;
  resolve(lease: Lease): void;
  reject(err: unknown): void;
  timer?: NodeJS.Timeout;
}

/** The codes of a statement's own failure: the server answered, so the connection is healthy. */
const STATEMENT_ERRORS: ReadonlySet<string> = new Set(['QUERY_FAILED', 'STATEMENT_REFUSED']);

/** Whether a connection that ran into `err` may serve the next borrower. */
const keepsConnection = (err: unknown): boolean => isHanactlError(err) && STATEMENT_ERRORS.has(err.code);

/** The clause a refusal adds when some of the connections it counts are still ending on the server. */
function endingNote(ending: number, whose: string): string {
  if (ending <= 0) return '';
  return ` (of ${whose}, ${ending} still ending on the server: a call was given up, by its timeout or a cancel, while its statement ran where the server does not stop it at once, and the connection counts until the server session is gone)`;
}

/** Why a wait for a connection ended early: the signal's own error, else a cancellation. */
function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (isHanactlError(reason)) return reason;
  return new HanactlError('QUERY_CANCELLED', 'The call was cancelled while it waited for a connection; nothing ran.');
}

/**
 * A bounded pool of driver connections with pg-pool's semantics: FIFO waiters with an
 * acquire timeout, idle eviction, max lifetime, destroy-on-error, and counters for
 * `hanactl pools`. A connection that reports whether a call left state in its session (`dirty`)
 * is cleaned when it is returned, before it idles — a lock or a temporary table is gone while
 * nobody holds it, not minutes later at the next borrow — and is not reset again on borrow. One
 * that does not report it is reset on every borrow.
 */
export class Pool {
  readonly #open: () => Promise<DriverConnection>;
  readonly #options: PoolOptions;
  readonly #describe: string;
  readonly #idle: Slot[] = [];
  readonly #busy = new Set<Slot>();
  readonly #waiters: Waiter[] = [];
  /** Per session (check-owner.ts): what it holds of this pool, for the share `use` enforces. */
  readonly #shares = new Map<string, Share>();
  #pending = 0;
  /**
   * Connections destroyed whose close has not resolved: the server session may still run what a
   * call left (a statement past its timeout that the server cannot interrupt yet), so each still
   * counts against `max` until the driver says it is gone.
   */
  #ending = 0;
  /** The close of each destroyed connection, settled once its server session is gone. */
  readonly #gone = new WeakMap<DriverConnection, Promise<void>>();
  /** Returned connections still being reset; they idle (or serve a waiter) when done. */
  #cleaning = 0;
  #ended = false;
  created = 0;
  destroyed = 0;
  errors = 0;
  lastUsedAt = Date.now();

  constructor(open: () => Promise<DriverConnection>, options: PoolOptions, describe: string) {
    this.#open = open;
    this.#options = options;
    this.#describe = describe;
  }

  get options(): PoolOptions {
    return this.#options;
  }
  get totalCount(): number {
    return this.#idle.length + this.#busy.size + this.#pending;
  }
  /** Server sessions the pool accounts for, against `max`: those it lends, idles or opens, and those still ending. */
  get #sessions(): number {
    return this.totalCount + this.#ending;
  }
  /** Connections given up and still closing: their server session is not gone yet. */
  get endingCount(): number {
    return this.#ending;
  }
  get idleCount(): number {
    return this.#idle.length;
  }
  get inUseCount(): number {
    return this.#busy.size;
  }
  get waitingCount(): number {
    return this.#waiters.length;
  }
  /** Connections one session may hold at once (perSessionShare of `max`). */
  get perSession(): number {
    return perSessionShare(this.#options.max);
  }

  /**
   * Borrows a connection, runs `fn` with it and gives it back: the borrow rule every caller goes
   * through (queries, catalog calls, explain, `test`). While the caller waits for a connection,
   * `signal` aborting ends the wait. When `fn` fails with a statement's own error (QUERY_FAILED,
   * STATEMENT_REFUSED: the server answered) the connection goes back; any other failure (lost or
   * broken, a timeout or cancel the driver gave up on, a bug) may have left it unusable, and it is
   * destroyed. The error is rethrown as it came.
   *
   * A call of an MCP session (check-owner.ts) first takes a place in that session's share of this
   * pool (`perSession`): beyond it, the session's next calls wait for its own calls to finish, in
   * order, so they never take the connections another session needs. A place not given within
   * acquireTimeoutMillis fails with TOO_MANY_CALLS. Calls of no session (the CLI) take no place.
   * A call whose connection was destroyed keeps its place until that connection's server session
   * is gone (its close resolved), though the call itself has ended: what a call left running on
   * the server after a timeout or cancel counts against its session, which cannot stack such
   * sessions beyond its share.
   */
  async use<T>(fn: (connection: DriverConnection) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const owner = checkOwner();
    if (owner === '') return this.#borrow(fn, signal);
    await this.#enterShare(owner, signal);
    let gone: Promise<void> | undefined;
    try {
      return await this.#borrow(fn, signal, (g) => {
        gone = g;
      });
    } finally {
      if (gone) this.#leaveShareOnceGone(owner, gone);
      else this.#leaveShare(owner);
    }
  }

  /** Keeps `owner`'s place, counted as ending, until `gone` settles. */
  #leaveShareOnceGone(owner: string, gone: Promise<void>): void {
    const share = this.#shares.get(owner);
    if (share) share.ending++;
    void gone.then(() => {
      if (share) share.ending--;
      this.#leaveShare(owner);
    });
  }

  /** Waits for a place in `owner`'s share of the pool. */
  async #enterShare(owner: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw abortError(signal);
    let share = this.#shares.get(owner);
    if (!share) {
      share = { held: 0, ending: 0, line: [] };
      this.#shares.set(owner, share);
    }
    if (share.held < this.perSession) {
      share.held++;
      return;
    }
    const line = share.line;
    await new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        const i = line.indexOf(go);
        if (i >= 0) line.splice(i, 1);
      };
      const go = (): void => {
        leave();
        resolve();
      };
      const onAbort = (): void => {
        leave();
        reject(abortError(signal as AbortSignal));
      };
      const held = share;
      const timer = setTimeout(() => {
        leave();
        reject(
          new HanactlError(
            'TOO_MANY_CALLS',
            `This session's calls already hold ${this.perSession} of the ${this.#options.max} connections to ${this.#describe}, its share (half, so other sessions always find one), and none finished within ${this.#options.acquireTimeoutMillis} ms${endingNote(held.ending, "this session's calls")}; wait for one of them to finish, then retry.`,
          ),
        );
      }, this.#options.acquireTimeoutMillis);
      timer.unref();
      signal?.addEventListener('abort', onAbort, { once: true });
      line.push(go);
    });
  }

  /** Gives `owner`'s place to its next waiting call, or frees it. */
  #leaveShare(owner: string): void {
    const share = this.#shares.get(owner);
    if (!share) return;
    const next = share.line[0];
    if (next) {
      next();
      return;
    }
    share.held--;
    if (share.held <= 0) this.#shares.delete(owner);
  }

  /** Runs `fn` on a borrowed connection; `onGone` learns the close of the connection when it was destroyed. */
  async #borrow<T>(
    fn: (connection: DriverConnection) => Promise<T>,
    signal?: AbortSignal,
    onGone?: (gone: Promise<void>) => void,
  ): Promise<T> {
    const lease = await this.acquire(signal);
    let failure: unknown;
    try {
      return await fn(lease.connection);
    } catch (err) {
      if (!keepsConnection(err)) failure = err ?? new Error('The call failed without an error.');
      throw err;
    } finally {
      lease.release(failure);
      const gone = this.#gone.get(lease.connection);
      if (gone) onGone?.(gone);
    }
  }

  /**
   * Borrows a connection, waiting in line when the pool is at its cap. `signal` aborting ends
   * the wait (in line, or while a new connection opens) with its reason when that is a hanactl
   * error, else QUERY_CANCELLED; a connection that arrives afterwards goes back to the pool.
   */
  async acquire(signal?: AbortSignal): Promise<Lease> {
    if (this.#ended) throw new HanactlError('SHUTTING_DOWN', 'The broker is shutting down; retry in a moment.');
    if (signal?.aborted) throw abortError(signal);
    this.lastUsedAt = Date.now();
    for (;;) {
      const slot = this.#idle.pop();
      if (!slot) break;
      this.#clearIdle(slot);
      if (this.#expired(slot) || slot.connection.broken) {
        this.#destroy(slot);
        continue;
      }
      this.#busy.add(slot);
      try {
        if (!slot.clean) await slot.connection.reset();
        return this.#lease(slot);
      } catch {
        this.errors++;
        this.#busy.delete(slot);
        this.#destroy(slot);
      }
    }
    // A connection being reset is about to idle: wait for it rather than open another.
    const open = this.#sessions < this.#options.max && this.#cleaning <= this.#waiters.length;
    return new Promise<Lease>((resolve, reject) => {
      const waiter: Waiter = {
        done: false,
        resolve: (lease) => {
          if (waiter.done) return lease.release();
          settle();
          resolve(lease);
        },
        reject: (err) => {
          if (waiter.done) return;
          settle();
          reject(err);
        },
      };
      const onAbort = (): void => {
        this.#leaveLine(waiter);
        waiter.reject(abortError(signal as AbortSignal));
      };
      const settle = (): void => {
        waiter.done = true;
        clearTimeout(waiter.timer);
        signal?.removeEventListener('abort', onAbort);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      if (open) {
        this.#create().then(
          (slot) => waiter.resolve(this.#lease(slot)),
          (err) => waiter.reject(err),
        );
        return;
      }
      waiter.timer = setTimeout(() => {
        this.#leaveLine(waiter);
        waiter.reject(
          new HanactlError(
            'POOL_EXHAUSTED',
            `All ${this.#options.max} connections to ${this.#describe} stayed busy for ${this.#options.acquireTimeoutMillis} ms${endingNote(this.#ending, 'them')}; retry, or ask a person to raise the pool size.`,
          ),
        );
      }, this.#options.acquireTimeoutMillis);
      waiter.timer.unref();
      this.#waiters.push(waiter);
    });
  }

  #leaveLine(waiter: Waiter): void {
    const i = this.#waiters.indexOf(waiter);
    if (i >= 0) this.#waiters.splice(i, 1);
  }

  /**
   * Opens connections until `min` exist, returning each to the idle list: a pool with a minimum
   * keeps that many warm, and opens replacements when one is destroyed. Failures are counted and
   * left for the next borrow to report.
   */
  async warm(): Promise<void> {
    while (!this.#ended && this.totalCount < this.#options.min && this.#sessions < this.#options.max) {
      let slot: Slot;
      try {
        slot = await this.#create();
      } catch {
        return;
      }
      this.#busy.delete(slot);
      if (this.#ended) this.#destroy(slot);
      else this.#returnToIdle(slot);
    }
  }

  async #create(): Promise<Slot> {
    this.#pending++;
    let connection: DriverConnection;
    try {
      connection = await this.#open();
    } catch (err) {
      this.#pending--;
      this.errors++;
      // The place this open held is free again: a caller queued behind it opens its own.
      this.#serveWaiters();
      throw err;
    }
    this.#pending--;
    this.created++;
    const slot: Slot = { connection, createdAt: Date.now(), clean: true };
    this.#busy.add(slot);
    return slot;
  }

  #lease(slot: Slot): Lease {
    let released = false;
    slot.clean = false;
    return {
      connection: slot.connection,
      release: (err?: unknown) => {
        if (released) throw new Error('Release called on a connection that was already released; this is a bug in hanactl.');
        released = true;
        if (err || slot.connection.broken || this.#expired(slot) || this.#ended) {
          this.#busy.delete(slot);
          if (err) this.errors++;
          this.#destroy(slot);
          this.#serveWaiters();
          return;
        }
        const { dirty } = slot.connection;
        if (dirty === true) {
          this.#clean(slot);
          return;
        }
        this.#busy.delete(slot);
        slot.clean = dirty === false;
        this.#returnToIdle(slot);
        this.#serveWaiters();
      },
    };
  }

  /** Resets a returned connection (it stays counted as busy meanwhile), then idles it or destroys it. */
  #clean(slot: Slot): void {
    this.#cleaning++;
    const done = (ok: boolean): void => {
      this.#cleaning--;
      this.#busy.delete(slot);
      if (!ok) this.errors++;
      if (ok && !slot.connection.broken && !this.#ended) {
        slot.clean = true;
        this.#returnToIdle(slot);
      } else {
        this.#destroy(slot);
      }
      this.#serveWaiters();
    };
    slot.connection.reset().then(
      () => done(true),
      () => done(false),
    );
  }

  #returnToIdle(slot: Slot): void {
    const waiter = this.#waiters.shift();
    if (waiter) {
      clearTimeout(waiter.timer);
      this.#busy.add(slot);
      if (slot.clean) {
        waiter.resolve(this.#lease(slot));
        return;
      }
      slot.connection.reset().then(
        () => waiter.resolve(this.#lease(slot)),
        () => {
          this.errors++;
          this.#busy.delete(slot);
          this.#destroy(slot);
          if (!waiter.done) this.#waiters.unshift(waiter);
          this.#serveWaiters();
        },
      );
      return;
    }
    this.#idle.push(slot);
    if (this.totalCount > this.#options.min) {
      slot.idleTimer = setTimeout(() => {
        const i = this.#idle.indexOf(slot);
        if (i >= 0 && this.totalCount > this.#options.min) {
          this.#idle.splice(i, 1);
          this.#destroy(slot);
        }
      }, this.#options.idleTimeoutMillis);
      slot.idleTimer.unref();
    }
  }

  /** When a slot was freed by destruction, a waiter may now open a new connection. */
  #serveWaiters(): void {
    // Waiters up to the number of connections being reset are served by those.
    while (this.#waiters.length > this.#cleaning && this.#sessions < this.#options.max && !this.#ended) {
      const waiter = this.#waiters.shift() as Waiter;
      clearTimeout(waiter.timer);
      this.#create().then(
        (slot) => waiter.resolve(this.#lease(slot)),
        (err) => waiter.reject(err),
      );
    }
  }

  #expired(slot: Slot): boolean {
    return Date.now() - slot.createdAt > this.#options.maxLifetimeMillis;
  }

  #clearIdle(slot: Slot): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
  }

  /**
   * Closes a connection. It counts as ending, against `max` (not in `totalCount`), until its close
   * resolves: a driver resolves it once the server session is gone, which after a timeout or
   * cancel the server has not acted on yet may be long after the call ended.
   */
  #destroy(slot: Slot): void {
    this.#clearIdle(slot);
    this.destroyed++;
    this.#ending++;
    const gone = slot.connection
      .close()
      .catch(() => {})
      .then(() => {
        this.#ending--;
        this.#serveWaiters();
        if (!this.#ended && this.totalCount < this.#options.min) void this.warm();
      });
    this.#gone.set(slot.connection, gone);
    if (!this.#ended && this.totalCount < this.#options.min) void this.warm();
  }

  /** Closes idle connections now and busy ones as they come back; rejects waiters. */
  async end(): Promise<void> {
    this.#ended = true;
    for (const waiter of this.#waiters.splice(0)) {
      clearTimeout(waiter.timer);
      waiter.reject(new HanactlError('SHUTTING_DOWN', 'The broker is shutting down; retry in a moment.'));
    }
    const idle = this.#idle.splice(0);
    for (const slot of idle) this.#destroy(slot);
  }
}
