import type { DriverConnection } from '../../daemon/engines/driver.js';
import type { JsonValue } from '../../shared/schemas.js';

/** What differs between engines, as data: each engine's test file fills one of these in. */
export interface EngineFixture {
  readonly name: string;
  readonly url: string;
  /** The placeholder for the i-th parameter (1-based). */
  placeholder(i: number): string;
  /** A one-row SELECT of `list` in the engine's spelling (default `SELECT <list>`). */
  selectRow?(list: string): string;
  /** An identifier quoted (default: in double quotes). */
  quote?(name: string): string;
  /** A statement returning the rows 1 to `n`, in order, in one integer column `n`. */
  series(n: number): string;
  /** A read whose rows never end (or not before any timeout), in one column `n`. */
  readonly endless?: string;
  /** A statement that runs for `seconds`, carrying `marker` in its text. */
  sleep(seconds: number, marker: string): string;
  /** Creates the types table `name` and fills one row; returns the SELECT and the expected row. */
  typesTable(name: string): { setup: string[]; select: string; expected: Record<string, JsonValue>; teardown: string };
  /** What `serverVersion()` answers. */
  readonly version: RegExp;
  /** How a write in a read call is refused, beyond being a HanactlError (toMatchObject). */
  readonly readOnlyRefusal?: Record<string, unknown>;
  /** How a statement naming a missing table fails, beyond QUERY_FAILED (toMatchObject on the error). */
  readonly missingTable?: Record<string, unknown>;
  /** How two statements in one call fail, beyond QUERY_FAILED (toMatchObject on the error). */
  readonly twoStatements?: Record<string, unknown>;
  /**
   * True when a statement stopped at its timeout or cancel leaves its connection usable (the
   * engine cancels it on the server); false when the engine gives the connection up to stop it
   * (SQLite kills its host process); absent when either may happen.
   */
  readonly stopKeepsConnection?: boolean;
  /** How many statements carrying `marker` still run, as the server's list of sessions says. */
  statementsRunning?(marker: string): Promise<number>;
  /**
   * The process that runs the statements of `conn`, where the engine has one of its own per
   * connection (SQLite's host): once the connection gives a statement up, that process is gone.
   */
  hostProcess?(conn: DriverConnection): number | undefined;
  /**
   * Learns which session is behind `conn` (while it is idle) and returns how to end it from
   * outside: the server kills the session, or the host process is killed. The returned function
   * resolves once the session is gone.
   */
  sessionKiller?(conn: DriverConnection): Promise<() => Promise<void>>;
  /** How a call on a connection ended from outside fails (toMatchObject on the error). */
  readonly lost?: Record<string, unknown>;
  /** A temporary table `name` in the engine's spelling: the statement that makes it, and the name to read it by. */
  tempTable(name: string): { create: string; name: string };
  /** Behaviours the engine cannot have, each with its reason. */
  readonly skip?: Partial<Record<ConformanceCase, string>>;
  cleanup?(): Promise<void>;
}

export type ConformanceCase =
  | 'timeout-cancels-on-server'
  | 'signal-cancels-on-server'
  | 'server-kill-discarded'
  | 'killed-connection-broken'
  | 'readonly-refuses-write'
  | 'endless-result-capped';
