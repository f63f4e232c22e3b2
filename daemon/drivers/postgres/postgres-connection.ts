import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { contextSqlName } from '../../context/context-names.js';
import { assertContextKept, assertContextUnchanged, contextUnavailable } from '../../context/context-unavailable.js';
import { normaliseDriverError } from '../scrub.js';
import { toJsonValue, uniqueColumnNames } from '../values.js';
import type { CorkableStream, PgClient, PgCursor, PgCursorConstructor, PgField } from './postgres-types.js';
import { CLEANUP_STATEMENTS, DBLINK_DISCONNECT_ALL, DBLINK_PRESENT } from './postgres-cleanup.js';
import { pgTypeName } from './postgres-type-names.js';

/** How long closing a cursor may take before the connection is given up. */
const CURSOR_CLOSE_MS = 1000;

/** Opens a second, short-lived client; used to cancel a statement from outside. */
export type PgSideChannel = () => Promise<PgClient>;

interface PgErrorLike {
  code?: string;
  message?: string;
}

/**
 * One PostgreSQL session. Every call runs in its own transaction: a read is
 * `BEGIN READ ONLY` and always rolled back; `SET LOCAL statement_timeout` makes the server
 * itself stop a runaway statement, and a client-side timer cancels it with
 * `pg_cancel_backend` should the server not answer.
 */
export class PostgresConnection implements DriverConnection {
  readonly #client: PgClient;
  readonly #Cursor: PgCursorConstructor;
  readonly #sideChannel: PgSideChannel;
  readonly #secrets: readonly string[];
  #broken = false;
  /**
   * Rejects once the connection is gone (the server ended the session, the socket dropped).
   * pg-cursor never settles a pending read when the connection dies between CommandComplete and
   * ReadyForQuery, so reads race this.
   */
  readonly #onLost = new Set<(err: unknown) => void>();
  #lostCause: unknown;
  /** A call failed part-way: the session may hold state until the next reset. */
  #dirty = false;

  constructor(client: PgClient, Cursor: PgCursorConstructor, sideChannel: PgSideChannel, secrets: readonly string[]) {
    this.#client = client;
    this.#Cursor = Cursor;
    this.#sideChannel = sideChannel;
    this.#secrets = secrets;
    const lose = (err: unknown) => {
      this.#broken = true;
      this.#lostCause ??= err;
      for (const reject of this.#onLost) reject(err);
      this.#onLost.clear();
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('Connection terminated unexpectedly')));
    const stream = client.connection?.stream;
    if (stream) coalesceWrites(stream);
  }

  /**
   * Settles `work`, or rejects as soon as the connection is lost. The listener lives only for
   * this call: a long-lived promise raced on every call would keep a reaction, and the call's
   * result, for the connection's whole life.
   */
  async #unlessLost<T>(work: Promise<T>): Promise<T> {
    if (this.#lostCause !== undefined) {
      work.catch(() => {}); // already lost: its own rejection is expected and not news
      throw this.#lostCause;
    }
    let reject!: (err: unknown) => void;
    const lost = new Promise<never>((_, r) => {
      reject = r;
    });
    this.#onLost.add(reject);
    try {
      return await Promise.race([work, lost]);
    } finally {
      this.#onLost.delete(reject);
      work.catch(() => {}); // settled or lost first: a later rejection of the work is handled
    }
  }

  get broken(): boolean {
    return this.#broken;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    const timeout = Math.max(1, Math.floor(options.timeoutMs));
    // RESET ALL clears any session setting (context values included) that could have survived
    // an earlier borrower; everything this call sets is transaction-local. One round trip.
    await this.#simple(`RESET ALL; BEGIN${options.readOnly ? ' READ ONLY' : ''}; SET LOCAL statement_timeout = ${timeout}`);
    let outcome: 'commit' | 'rollback' = 'rollback';
    const stopWatch = this.#watch(options);
    try {
      const context = options.context ?? {};
      await this.#applyContext(context);
      const result = await this.#run(sql, params, options.maxRows);
      await this.#verifyContext(context);
      if (!options.readOnly) outcome = 'commit';
      return result;
    } catch (err) {
      throw this.#normalise(err, stopWatch.reason());
    } finally {
      stopWatch.stop();
      await this.#finish(outcome);
    }
  }

  /**
   * Places context values as transaction-local settings `mcp.<name>`, read in SQL with
   * `current_setting('mcp.customer_id', true)`. Names are validated identifiers; values are bound.
   */
  async #applyContext(context: Readonly<Record<string, string>>): Promise<void> {
    const entries = Object.entries(context);
    if (entries.length === 0) return;
    const calls = entries.map(([name], i) => `set_config('mcp.${contextSqlName(name)}', $${i + 1}, true)`);
    let readBack: unknown[] | undefined;
    try {
      const result = await this.#client.query({ text: `SELECT ${calls.join(', ')}`, values: entries.map(([, v]) => v), rowMode: 'array' });
      readBack = result.rows[0] as unknown[] | undefined;
    } catch (err) {
      const sqlState = (err as PgErrorLike).code;
      // A lost connection is not the database refusing: let the call's own handling report it.
      if (this.#broken || !sqlState || sqlState.startsWith('08') || sqlState === '57P01') throw err;
      throw contextUnavailable('set_config', err, this.#secrets);
    }
    // set_config answers with the value now in force: the check costs no extra round trip.
    assertContextKept(
      entries.map(([name]) => name),
      context,
      readBack ?? [],
      'set_config',
    );
  }

  /**
   * Reads the context values back after the statement, before its transaction ends: a statement
   * that changed one (`set_config` in a subquery, a CTE, a function) may have read another scope's
   * rows, so its result is refused and a write is not committed. Functions are schema-qualified:
   * the statement may have changed `search_path`.
   */
  async #verifyContext(context: Readonly<Record<string, string>>): Promise<void> {
    const names = Object.keys(context);
    if (names.length === 0) return;
    const reads = names.map((name) => `pg_catalog.current_setting('mcp.${contextSqlName(name)}', true)`);
    const result = await this.#client.query({ text: `SELECT ${reads.join(', ')}`, rowMode: 'array' });
    assertContextUnchanged(names, context, (result.rows[0] as unknown[] | undefined) ?? [], 'set_config');
  }

  async #run(sql: string, params: readonly Param[], maxRows: number): Promise<StatementResult> {
    const cursor = this.#client.query(new this.#Cursor(sql, [...params], { rowMode: 'array' }));
    try {
      const raw = await this.#unlessLost(cursor.read(maxRows + 1));
      const meta = cursor._result;
      const fields: PgField[] = meta?.fields ?? [];
      const names = uniqueColumnNames(fields.map((f) => f.name));
      const truncated = raw.length > maxRows;
      const kept = truncated ? raw.slice(0, maxRows) : raw;
      const rows = kept.map((values) => {
        const row: Record<string, ReturnType<typeof toJsonValue>> = {};
        names.forEach((name, i) => {
          row[name] = toJsonValue(values[i]);
        });
        return row;
      });
      const columns = fields.map((f, i) => ({ name: names[i] ?? f.name, type: pgTypeName(f.dataTypeID) }));
      const isRowless = fields.length === 0;
      const affected = isRowless && typeof meta?.rowCount === 'number' ? meta.rowCount : undefined;
      return { columns, rows, rowCount: rows.length, truncated, ...(affected !== undefined ? { affectedRows: affected } : {}) };
    } finally {
      await this.#closeCursor(cursor);
    }
  }

  /**
   * pg-cursor's close() waits for a ReadyForQuery that never comes when the server ended the
   * session under the statement (a restart's 57P01, a dropped socket): the wait is bounded, and a
   * connection that does not answer in time is given up (broken, so the pool destroys it).
   */
  async #closeCursor(cursor: PgCursor): Promise<void> {
    if (this.#broken) return;
    let timer: NodeJS.Timeout | undefined;
    const closed = await this.#unlessLost(
      Promise.race([
        cursor.close().then(
          () => true,
          () => false,
        ),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(false), CURSOR_CLOSE_MS);
          timer.unref();
        }),
      ]),
    ).catch(() => false);
    clearTimeout(timer);
    if (!closed) this.#broken = true;
  }

  /** Arms the client-side guard: a timer a little past the server's own timeout, and the caller's signal. */
  #watch(options: ExecuteOptions): { stop(): void; reason(): 'timeout' | 'cancelled' | undefined } {
    let reason: 'timeout' | 'cancelled' | undefined;
    const cancel = (why: 'timeout' | 'cancelled') => {
      reason ??= why;
      void this.cancel();
    };
    const timer = setTimeout(() => cancel('timeout'), options.timeoutMs + 1000);
    timer.unref();
    const onAbort = () => cancel('cancelled');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    if (options.signal?.aborted) onAbort();
    return {
      stop: () => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
      },
      reason: () => reason,
    };
  }

  /** Cancels the running statement on the server, from a second connection. */
  async cancel(): Promise<void> {
    const pid = this.#client.processID;
    if (!pid) return;
    let side: PgClient | undefined;
    try {
      side = await this.#sideChannel();
      await side.query('SELECT pg_cancel_backend($1)', [pid]);
    } catch {
      this.#broken = true;
    } finally {
      await side?.end().catch(() => {});
    }
  }

  /**
   * Ends the call's transaction and, in the same round trip, drops the session-level state a
   * statement could leave behind (CLEANUP_STATEMENTS), so the connection goes back to its pool
   * clean. dblink connections need a second round trip, paid only where dblink is installed.
   */
  async #finish(outcome: 'commit' | 'rollback'): Promise<void> {
    if (this.#broken) return;
    try {
      const sql = [outcome === 'commit' ? 'COMMIT' : 'ROLLBACK', ...CLEANUP_STATEMENTS, DBLINK_PRESENT].join('; ');
      const results = (await this.#client.query(sql)) as unknown as { rows: Record<string, unknown>[] }[];
      if (results.at(-1)?.rows[0]?.exists === true) await this.#simple(DBLINK_DISCONNECT_ALL);
    } catch {
      this.#dirty = true;
    }
  }

  async #simple(text: string): Promise<void> {
    try {
      await this.#client.query(text);
    } catch (err) {
      throw this.#normalise(err, undefined);
    }
  }

  #normalise(err: unknown, reason: 'timeout' | 'cancelled' | undefined): HanactlError {
    this.#dirty = true;
    if (err instanceof HanactlError) return err;
    const e = err as PgErrorLike;
    const sqlState = typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
    if (!sqlState) this.#broken = true;
    if (reason === 'cancelled') return new HanactlError('QUERY_CANCELLED', 'The statement was cancelled on the server.');
    if (sqlState === '57014' || reason === 'timeout') {
      return new HanactlError(
        'QUERY_TIMEOUT',
        'The statement ran past its time limit and was cancelled on the server. Narrow it (WHERE, LIMIT) or ask for a longer timeout.',
        { sqlState: '57014' },
      );
    }
    if (sqlState?.startsWith('08') || sqlState === '57P01') this.#broken = true;
    if (!sqlState && (this.#lostCause !== undefined || isSocketError(err))) {
      // The socket dropped under the call (the server ended the session, a reset, a network
      // fault): no statement the agent could change would help, and the next call gets a new one.
      const cause = normaliseDriverError(err, 'CONNECT_FAILED', this.#secrets).message;
      return new HanactlError(
        'CONNECT_FAILED',
        `The connection to PostgreSQL was lost during the call (${cause}); the pool opens a new one for the next call, which can be retried.`,
      );
    }
    return normaliseDriverError(err, 'QUERY_FAILED', this.#secrets, sqlState ? { sqlState } : {});
  }

  async ping(): Promise<void> {
    await this.#simple('SELECT 1');
  }

  /** True after a call that failed part-way: the pool resets the connection when it is returned. */
  get dirty(): boolean {
    return this.#dirty;
  }

  async reset(): Promise<void> {
    // Every call ends by cleaning the session (#finish), so a clean call leaves nothing behind
    // and the reset costs no round trip. After a failure the session is scrubbed: ROLLBACK, then
    // DISCARD ALL (which refuses to run in a transaction), then any dblink connection.
    if (!this.#dirty) return;
    await this.#simple('ROLLBACK');
    await this.#simple('DISCARD ALL');
    await this.#simple(DBLINK_DISCONNECT_ALL);
    this.#dirty = false;
  }

  async serverVersion(): Promise<string | undefined> {
    const res = await this.#client.query('SHOW server_version');
    const v = res.rows[0]?.server_version;
    return typeof v === 'string' ? `PostgreSQL ${v}` : undefined;
  }

  async close(): Promise<void> {
    this.#broken = true;
    await this.#client.end().catch(() => {});
  }
}

/** A socket-level failure (`ECONNRESET`, `EPIPE`, ...) or pg's own word for a dropped connection. */
function isSocketError(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return true;
  return /Connection terminated|connection (is )?closed|socket/i.test(err instanceof Error ? err.message : '');
}

/**
 * pg writes each protocol message with its own `write` (a cursor's Parse, Bind, Describe and
 * Flush are four, its Close and Sync two more), and every write to an uncorked socket is a
 * system call. Corking on the first write of a tick and uncorking on the next tick sends what
 * one step of the protocol writes as a single `writev`; nothing waits longer than the tick.
 */
export function coalesceWrites(stream: CorkableStream): void {
  const write = stream.write.bind(stream);
  let corked = false;
  const flush = (): void => {
    corked = false;
    stream.uncork();
  };
  stream.write = (chunk: unknown, ...rest: unknown[]): boolean => {
    if (!corked) {
      corked = true;
      stream.cork();
      process.nextTick(flush);
    }
    return write(chunk, ...rest);
  };
}
