import type { Engine, Target } from '../../shared/connection-url.js';
import type { Column, JsonValue, Param } from '../../shared/schemas.js';
import type { StatementReferences } from '../policy/types.js';

/** What one statement returned, already JSON-safe. */
export interface StatementResult {
  readonly columns: Column[];
  readonly rows: Record<string, JsonValue>[];
  /** Rows returned (after the cap). */
  readonly rowCount: number;
  /** True when the statement had more than `maxRows` rows. */
  readonly truncated: boolean;
  /** Rows changed by a write, where the engine reports it. */
  readonly affectedRows?: number;
}

export interface ExecuteOptions {
  /** At most this many rows are returned; the driver fetches one more to know about truncation. */
  readonly maxRows: number;
  /**
   * The result cap in bytes: rows stop being read once those kept fill it as it will show them,
   * or hold far more as read (row-bytes.ts, RowBudget); the rest are not read, and the result is
   * `truncated`. Absent: rows are limited by `maxRows` only.
   */
  readonly maxBytes?: number;
  /** The statement is cancelled on the server when it runs longer. */
  readonly timeoutMs: number;
  /** Run inside a read-only transaction that is rolled back. */
  readonly readOnly: boolean;
  /**
   * The connection separates rows between callers by context values (it declares context names).
   * PostgreSQL: a read's transaction then runs at REPEATABLE READ whatever the database's default,
   * since a SERIALIZABLE read takes a predicate lock on each tuple it fetches before row-level
   * security removes it (postgres-call.ts).
   */
  readonly separated?: boolean;
  /** Aborting it cancels the statement on the server. */
  readonly signal?: AbortSignal;
  /**
   * Context parameter values to place in the database session for this call. The driver
   * first clears every context name it ever set on this connection, always (also when this
   * is empty or absent), then sets these, values bound and never concatenated.
   */
  readonly context?: Readonly<Record<string, string>>;
  /**
   * Sign each context value with this key (PostgreSQL: `mcp.<name>.sig`, bound to the backend's
   * pid), for the verifying function a person installed. Never logged, never sent but as a MAC.
   */
  readonly contextKey?: Buffer;
  /**
   * A read is planned first (EXPLAIN, never run) inside the same transaction and session setup,
   * and refused with `over(estimate)` when the plan's estimate is above `maxCost`; the statement
   * then never runs. Only on reads; statements the engine cannot EXPLAIN pass without an estimate.
   */
  readonly costGuard?: CostGuard;
  /**
   * What the statement names (PostgreSQL): the server resolves each name in the call's
   * transaction, before the statement, and the call is refused when one reaches what no call may
   * read (a view over pg_stat_activity) or calls a SECURITY DEFINER function (postgres-call.ts).
   */
  readonly references?: StatementReferences;
}

/** A person's cost limit on a connection's reads (`hanactl set --max-cost`), and its refusals. */
export interface CostGuard {
  readonly maxCost: number;
  /** The refusal of a statement whose plan estimate is over the limit. */
  over(estimate: number): Error;
  /** The refusal when the server gives no estimate at all; `reason` is one sentence. */
  unavailable(reason: string): Error;
}

/** One physical database connection, owned by a pool. */
export interface DriverConnection {
  /** Runs exactly one statement with bound parameters. */
  execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult>;
  /** Cheap round trip proving the connection is alive. */
  ping(): Promise<void>;
  /** Puts the session back to a clean state before the next borrower. */
  reset(): Promise<void>;
  /**
   * Whether the session may hold state a call left behind. A connection that reports it cleans
   * itself at the end of each call and is reset by the pool when it is returned only if this is
   * true, never on borrow; one that leaves it undefined is reset on every borrow.
   */
  readonly dirty?: boolean;
  /** The server's version string, when known. */
  serverVersion(): Promise<string | undefined>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
  /** True once the connection is known to be unusable (the pool destroys it). */
  readonly broken: boolean;
}

/** Opens connections to one target. */
export interface Driver {
  readonly engine: Engine;
  /**
   * Pool settings that suit the engine better than the broker-wide defaults; what a person set
   * in config.json still wins.
   */
  readonly poolDefaults?: { readonly max?: number; readonly idleTimeoutMillis?: number };
  connect(): Promise<DriverConnection>;
}

/** The secret a driver needs; never enumerable, so it stays out of logs and JSON. */
export interface DriverSecret {
  readonly password?: string;
}

export interface DriverSettings {
  /** Give up connecting after this long. */
  readonly connectTimeoutMs: number;
}

/** Builds a driver for a target; one module per engine exports one of these. */
export type DriverFactory = (target: Target, secret: DriverSecret, settings: DriverSettings) => Driver;
