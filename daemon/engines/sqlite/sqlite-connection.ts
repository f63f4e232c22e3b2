import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { StatementWatch } from '../statement-watch.js';
import { statementCancelled } from '../stop-errors.js';
import { SqliteHostProcess } from './sqlite-host-process.js';
import type { HostCall, HostResults } from './sqlite-protocol.js';

/** Bound on the calls that run no user SQL (ping, reset, version, context): a stuck worker is killed. */
const CONTROL_TIMEOUT_MS = 10_000;

/** How long `close()` lets the worker close its database before killing it. */
const CLOSE_GRACE_MS = 1000;

/** What `SqliteConnection.open` needs to know about the file. */
export interface SqliteOpenOptions {
  readonly path: string;
  readonly readonly: boolean;
  /** Give up when the worker has not opened the file by then. */
  readonly connectTimeoutMs: number;
}

/**
 * One SQLite file, opened in a child process of its own (`sqlite-host`), so a statement never
 * blocks the daemon's event loop and a runaway one can be stopped: on its deadline or when its
 * signal aborts, the child is killed, the call rejects with QUERY_TIMEOUT or QUERY_CANCELLED,
 * and the connection is `broken` (the pool destroys it and opens another). A read runs with
 * `PRAGMA query_only` on, inside a transaction that is rolled back; a write commits.
 */
export class SqliteConnection implements DriverConnection {
  readonly #host: SqliteHostProcess;

  private constructor(host: SqliteHostProcess) {
    this.#host = host;
  }

  /**
   * Starts a worker and opens the file in it; resolves once it is open. Rejects with the
   * worker's CONNECT_FAILED, or CONNECT_FAILED after `connectTimeoutMs`; no worker is left behind.
   */
  static async open(options: SqliteOpenOptions): Promise<SqliteConnection> {
    const host = new SqliteHostProcess();
    try {
      await bounded(
        host,
        { op: 'open', path: options.path, readonly: options.readonly },
        options.connectTimeoutMs,
        () =>
          new HanactlError(
            'CONNECT_FAILED',
            `The SQLite file ${options.path} was not open after ${options.connectTimeoutMs} ms; try again.`,
          ),
      );
      return new SqliteConnection(host);
    } catch (err) {
      await host.kill();
      throw err;
    }
  }

  /** True once the worker was killed or has exited; the pool then destroys the connection. */
  get broken(): boolean {
    return !this.#host.alive;
  }

  /**
   * Never dirty: the host puts the connection back as it was opened at the end of every call
   * (transaction, settings, context values, temporary objects), or retires itself when it cannot.
   */
  get dirty(): boolean {
    return false;
  }

  /** The worker's process id, for tests and diagnostics. */
  get pid(): number | undefined {
    return this.#host.pid;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    if (options.signal?.aborted) throw statementCancelled();
    return bounded(
      this.#host,
      {
        op: 'execute',
        sql,
        params,
        maxRows: options.maxRows,
        ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
        readOnly: options.readOnly,
        context: { ...options.context },
      },
      options.timeoutMs,
      (watch) => watch.error(),
      options.signal,
    );
  }

  async ping(): Promise<void> {
    await this.#control({ op: 'ping' });
  }

  /** Rolls back anything open, turns `query_only` back on and clears the context values. */
  async reset(): Promise<void> {
    await this.#control({ op: 'reset' });
  }

  async serverVersion(): Promise<string | undefined> {
    return (await this.#control({ op: 'version' })) ?? undefined;
  }

  /**
   * Replaces the values the SQL function `mcp_context(name)` returns on this connection: every
   * earlier value is cleared, then these are set (names trimmed and upper-cased). A name not
   * set reads as NULL. Values are plain data, never spliced into SQL.
   */
  async setContext(values: Readonly<Record<string, string>>): Promise<void> {
    await this.#control({ op: 'setContext', values: { ...values } });
  }

  /** A call that runs no user SQL, bounded by CONTROL_TIMEOUT_MS. */
  #control<C extends HostCall>(call: C): Promise<HostResults[C['op']]> {
    return bounded(
      this.#host,
      call,
      CONTROL_TIMEOUT_MS,
      () =>
        new HanactlError(
          'QUERY_FAILED',
          `The SQLite worker did not answer "${call.op}" within ${CONTROL_TIMEOUT_MS / 1000} s and was stopped.`,
        ),
    );
  }

  /** Asks the worker to close the file and exit; kills it after 1 s. Never throws. */
  async close(): Promise<void> {
    await this.#host.close(CLOSE_GRACE_MS);
  }
}

/**
 * Runs one request on the worker under a statement watch: on `timeoutMs` or when `signal`
 * aborts, the worker is killed (nothing else stops a statement in its thread) and, once it is
 * reaped, the request rejects with `stopped(watch)`. The connection is broken from then on.
 */
async function bounded<C extends HostCall>(
  host: SqliteHostProcess,
  call: C,
  timeoutMs: number,
  stopped: (watch: StatementWatch) => HanactlError,
  signal?: AbortSignal,
): Promise<HostResults[C['op']]> {
  const watch = new StatementWatch({ timeoutMs, ...(signal ? { signal } : {}), graceMs: 0, abandon: () => host.kill() });
  try {
    return await host.request(call);
  } catch (err) {
    if (!watch.interrupted) throw err;
    await host.kill();
    throw stopped(watch);
  } finally {
    await watch.stop();
  }
}
