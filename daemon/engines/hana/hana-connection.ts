import { HanactlError } from '../../../shared/errors.js';
import { randomHex } from '../../../shared/random-hex.js';
import type { Param } from '../../../shared/schemas.js';
import { assertContextKept, contextUnavailable } from '../context-unavailable.js';
import type { CostGuard, DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { explainable } from '../plan-cost.js';
import { StatementWatch } from '../statement-watch.js';
import { statementCancelled } from '../stop-errors.js';
import { settleQuietly, viaCallback, viaCallbackWithin } from './callbacks.js';
import type { HanaConnectionLike, HanaResultSetLike, HanaStatementLike } from './hana-client-types.js';
import { errorFacts, isConnectionLost, queryError } from './hana-errors.js';
import {
  assertSessionKey,
  buildContextCheck,
  buildContextSet,
  buildContextUnset,
  explainPlanSql,
  PING_SQL,
  PLAN_COST_SQL,
  PLAN_DELETE_SQL,
  SERVER_VERSION_SQL,
  SET_TRANSACTION_READ_ONLY,
  SET_TRANSACTION_READ_WRITE,
} from './hana-sql.js';
import { readResultSet } from './result-reader.js';

/** Leading keywords of reads SAP HANA cannot EXPLAIN: the cost guard lets them pass without an estimate. */
export const HANA_NOT_EXPLAINABLE: ReadonlySet<string> = new Set(['EXPLAIN']);

/** Statement kinds (`extension/FunctionCode.js`) that answer with a result set. */
const RESULT_SET_FUNCTION_CODES = new Set([5 /* SELECT */, 6 /* SELECT FOR UPDATE */, 9 /* CALL with result */]);

export interface HanaConnectionOptions {
  /** `host:port`, for messages. */
  readonly serverNode: string;
  /**
   * How long a request outside a statement (ping, version, rollback, UNSET, close) may wait for
   * its answer (ms): the connect timeout. A statement and its fetches are bounded by the call's deadline.
   */
  readonly communicationTimeoutMs: number;
  /** How long a cancelled statement may take to wind down before the connection is given up. */
  readonly cancelGraceMs?: number;
  /** Upper bound on `close()`. */
  readonly closeTimeoutMs?: number;
}

const DEFAULT_CANCEL_GRACE_MS = 3_000;
const DEFAULT_CLOSE_TIMEOUT_MS = 5_000;

/**
 * One SAP HANA session. Read-only calls run as `SET TRANSACTION READ ONLY` inside a transaction
 * (autocommit off) that is always rolled back; writes run with autocommit. It holds no password:
 * the agent shapes what its errors quote, so they are masked by shape only (scrub.ts).
 */
export class HanaConnection implements DriverConnection {
  readonly #conn: HanaConnectionLike;
  readonly #options: HanaConnectionOptions;
  #broken = false;
  #closed = false;
  #busy = false;
  /** An earlier call may have left the session in read-only mode. */
  #mayBeReadOnly = false;
  /** Context names this connection has ever set: each call reads them all back. */
  readonly #contextNames = new Set<string>();
  /** Names that may hold a value in the session now; cleared when a call ends. */
  readonly #contextSet = new Set<string>();

  constructor(conn: HanaConnectionLike, options: HanaConnectionOptions) {
    this.#conn = conn;
    this.#options = options;
  }

  get broken(): boolean {
    return this.#broken || this.#closed;
  }

  /**
   * Each call ends by UNSETting its context values and rolling back (`#endCall`), so the session
   * holds nothing a call left behind unless that failed (and then it is also broken).
   */
  get dirty(): boolean {
    return this.#contextSet.size > 0;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    this.#assertUsable();
    if (!(options.timeoutMs > 0) || !(options.maxRows >= 0)) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `A statement needs a positive timeoutMs and a maxRows of 0 or more (got ${options.timeoutMs} and ${options.maxRows}).`,
      );
    }
    if (this.#busy) throw new HanactlError('INTERNAL', 'A SAP HANA connection was given two statements at once.');
    // Cancelled before it started: no round trip at all.
    if (options.signal?.aborted) throw statementCancelled();
    // On the deadline or the signal the server is asked to abort the request; work still running
    // after the grace is abandoned (the call ends at once and the connection is destroyed).
    const watch = new StatementWatch({
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
      cancel: () => this.#conn.abort(() => undefined),
      graceMs: this.#options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS,
    });
    this.#busy = true;
    try {
      return await watch.race(this.#runCall(sql, params, options, watch));
    } catch (err) {
      throw this.#callError(err, watch);
    } finally {
      await watch.stop();
      if (watch.abandoned) this.#broken = true;
      else await this.#endCall();
      this.#busy = false;
    }
  }

  async ping(): Promise<void> {
    this.#assertUsable();
    try {
      await this.#exec(PING_SQL);
    } catch (err) {
      this.#broken = true;
      const facts = errorFacts(err);
      throw new HanactlError(
        'CONNECT_FAILED',
        `The SAP HANA connection to ${this.#options.serverNode} stopped answering: ${queryError(err).message}`,
        facts,
      );
    }
  }

  async reset(): Promise<void> {
    this.#assertUsable();
    try {
      await this.#rollback();
      this.#conn.setAutoCommit(true);
      await this.#clearContext();
    } catch (err) {
      this.#broken = true;
      const cause = queryError(err);
      throw new HanactlError('QUERY_FAILED', `Could not reset the SAP HANA session: ${cause.message}`, cause.details);
    }
  }

  async serverVersion(): Promise<string | undefined> {
    if (this.broken) return undefined;
    try {
      const rows = await this.#exec(SERVER_VERSION_SQL);
      const version = Array.isArray(rows) ? (rows[0] as { VERSION?: unknown } | undefined)?.VERSION : undefined;
      return typeof version === 'string' ? version : undefined;
    } catch (err) {
      if (isConnectionLost(err)) this.#broken = true;
      return undefined;
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await settleQuietly((cb) => this.#conn.disconnect(cb), this.#options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS);
  }

  #assertUsable(): void {
    if (this.#closed) throw new HanactlError('INTERNAL', 'This SAP HANA connection is closed.');
    if (this.#broken)
      throw new HanactlError(
        'CONNECT_FAILED',
        `The SAP HANA connection to ${this.#options.serverNode} is broken; the pool opens a new one.`,
      );
  }

  /** One statement outside a call's deadline, bounded by the upkeep timeout. */
  #exec(sql: string): Promise<unknown> {
    return viaCallbackWithin<unknown>((cb) => this.#conn.exec(sql, [], cb), this.#options.communicationTimeoutMs, sql);
  }

  /** The rollback that ends a call or resets the session, bounded like `#exec`. */
  #rollback(): Promise<void> {
    return viaCallbackWithin((cb) => this.#conn.rollback(cb), this.#options.communicationTimeoutMs, 'ROLLBACK');
  }

  /**
   * The cost guard: `EXPLAIN PLAN` of the statement, with its binds, then its cost read and its
   * rows deleted. EXPLAIN PLAN writes its rows into EXPLAIN_PLAN_TABLE, which a read-only
   * transaction would refuse, so it runs on this connection in autocommit just before the read's
   * read-only transaction opens, as explain_query's write scope does. Throws the guard's refusal
   * when the cost is over the limit; the statement is then never prepared.
   */
  async #checkCost(sql: string, params: readonly Param[], costGuard: CostGuard): Promise<void> {
    this.#conn.setAutoCommit(true);
    if (this.#mayBeReadOnly) {
      await this.#exec(SET_TRANSACTION_READ_WRITE);
      this.#mayBeReadOnly = false;
    }
    const name = `HANACTL_COST_${randomHex(8).toUpperCase()}`;
    const bound = (text: string, values: readonly Param[]) =>
      viaCallbackWithin<unknown>((cb) => this.#conn.exec(text, [...values], cb), this.#options.communicationTimeoutMs, text);
    let cost: number | undefined;
    try {
      await bound(explainPlanSql(name, sql), params);
      const rows = await bound(PLAN_COST_SQL, [name]);
      const value = Array.isArray(rows) ? (rows[0] as { COST?: unknown } | undefined)?.COST : undefined;
      cost = value === null || value === undefined || value === '' ? undefined : Number(value);
    } catch (err) {
      if (isConnectionLost(err)) throw err;
      throw queryError(err);
    } finally {
      await bound(PLAN_DELETE_SQL, [name]).catch(() => {});
    }
    if (cost === undefined || !Number.isFinite(cost)) throw costGuard.unavailable('the SAP HANA plan carried no cost.');
    if (cost > costGuard.maxCost) throw costGuard.over(cost);
  }

  /** Puts the session in the call's mode, then runs the statement. */
  async #runCall(sql: string, params: readonly Param[], options: ExecuteOptions, watch: StatementWatch): Promise<StatementResult> {
    if (options.readOnly && options.costGuard && explainable(sql, HANA_NOT_EXPLAINABLE))
      await this.#checkCost(sql, params, options.costGuard);
    if (options.readOnly) {
      this.#conn.setAutoCommit(false);
      this.#mayBeReadOnly = true;
      await this.#exec(SET_TRANSACTION_READ_ONLY);
    } else {
      this.#conn.setAutoCommit(true);
      if (this.#mayBeReadOnly) {
        await this.#exec(SET_TRANSACTION_READ_WRITE);
        this.#mayBeReadOnly = false;
      }
    }
    await this.#applyContext(options.context ?? {});
    const checkpoint = (): void => {
      if (watch.reason) throw watch.error();
    };
    checkpoint();
    const stmt = await viaCallback<HanaStatementLike>((cb) => this.#conn.prepare(sql, cb));
    try {
      return await this.#runStatement(stmt, params, options, checkpoint);
    } finally {
      if (!watch.abandoned) await settleQuietly((cb) => stmt.drop(cb), this.#options.communicationTimeoutMs);
    }
  }

  async #runStatement(
    stmt: HanaStatementLike,
    params: readonly Param[],
    options: ExecuteOptions,
    checkpoint: () => void,
  ): Promise<StatementResult> {
    const graceMs = this.#options.cancelGraceMs ?? DEFAULT_CANCEL_GRACE_MS;
    try {
      // A client-side backstop behind our own timer (seconds; 0 would mean none).
      stmt.setTimeout?.(Math.ceil(options.timeoutMs / 1000) + 1);
    } catch {
      // Older clients: the timer and abort() still bound the statement.
    }
    // The connection-wide communication timeout is the connect timeout; a long statement needs more.
    // The connection-wide communication timeout is only a backstop; this request waits as long as the call may.
    const execOptions = { communicationTimeout: options.timeoutMs + graceMs + 1_000 };
    const bound = [...params];
    const info = stmt.getColumnInfo?.() ?? [];
    if (info.length === 0 && !RESULT_SET_FUNCTION_CODES.has(stmt.functionCode?.() ?? -1)) {
      const result = await viaCallback<unknown>((cb) => stmt.exec(bound, execOptions, cb));
      checkpoint();
      return { columns: [], rows: [], rowCount: 0, truncated: false, ...(typeof result === 'number' ? { affectedRows: result } : {}) };
    }
    const rs = await viaCallback<HanaResultSetLike>((cb) => stmt.execQuery(bound, execOptions, cb));
    try {
      const columns = rs.getColumnInfo?.() ?? info;
      return await readResultSet(rs, columns.length > 0 ? columns : info, options.maxRows, checkpoint, options.maxBytes);
    } finally {
      await settleQuietly((cb) => rs.close(cb), this.#options.communicationTimeoutMs);
    }
  }

  /**
   * Session variables for context parameters, read with `SESSION_CONTEXT('NAME')`: names left
   * set by an earlier call are UNSET, this call's values are SET (SAP HANA's documented literal
   * form), then every name this connection ever used is read back in one query before the
   * statement runs; a name without a value must read back NULL.
   */
  async #applyContext(context: Readonly<Record<string, string>>): Promise<void> {
    for (const name of Object.keys(context)) {
      assertSessionKey(name);
      this.#contextNames.add(name);
    }
    if (this.#contextNames.size === 0) return;
    const statements: { sql: string; name: string }[] = [];
    for (const name of this.#contextSet) if (context[name] === undefined) statements.push({ sql: buildContextUnset(name), name });
    for (const [name, value] of Object.entries(context)) statements.push({ sql: buildContextSet(name, value), name });
    for (const statement of statements) {
      this.#contextSet.add(statement.name);
      try {
        await this.#exec(statement.sql);
      } catch (err) {
        if (isConnectionLost(err)) throw err;
        throw contextUnavailable('session variables (SET / UNSET)', err);
      }
    }
    for (const name of this.#contextSet) if (context[name] === undefined) this.#contextSet.delete(name);
    // Read back just before the statement: what it will see is what this call set.
    const names = [...this.#contextNames];
    const rows = await this.#exec(buildContextCheck(names));
    const row = (Array.isArray(rows) ? rows[0] : undefined) as Record<string, unknown> | undefined;
    assertContextKept(
      names,
      context,
      names.map((name) => row?.[name]),
      'session variables (SET / UNSET)',
    );
  }

  /** UNSETs every context name that may hold a value, so an idle session carries none. */
  async #clearContext(): Promise<void> {
    for (const name of [...this.#contextSet]) {
      await this.#exec(buildContextUnset(name));
      this.#contextSet.delete(name);
    }
  }

  /**
   * Ends a call, so the connection goes back to the pool clean: its context values UNSET and its
   * transaction rolled back (a read-only one is never committed). When either fails the session
   * is not known to be clean, so the connection is marked broken and the pool destroys it.
   */
  async #endCall(): Promise<void> {
    try {
      await this.#clearContext();
      await this.#rollback();
    } catch {
      this.#broken = true;
    }
    if (this.#conn.state?.() === 'disconnected') this.#broken = true;
  }

  #callError(err: unknown, watch: StatementWatch): HanactlError {
    if (isConnectionLost(err)) this.#broken = true;
    if (err instanceof HanactlError) return err;
    if (watch.reason) return watch.error(errorFacts(err));
    const facts = errorFacts(err);
    // The client's own query timeout (the backstop) reports SQLSTATE HYT00.
    if (facts.sqlState === 'HYT00') return watch.error(facts, 'timeout');
    return queryError(err);
  }
}
