import type { Param } from '../../shared/schemas.js';
import type { CostGuard } from '../engines/driver.js';
import type { StatementReferences } from '../policy/types.js';

/** Where a `project:<name>` connection is looked up: the caller's project folder and session. */
export interface ResolveScope {
  readonly project?: string;
  readonly session?: string;
}

/**
 * Where statements run and for whom: the connection as the caller named it, the scope it
 * resolves in, and the call's signal (the caller going away, an MCP cancellation, a person's
 * `hanactl cancel`). Aborting the signal ends a wait for a connection and cancels a running
 * statement on the server.
 */
export interface StatementTarget {
  readonly connection: string;
  readonly scope?: ResolveScope | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Else the daemon's default. */
  readonly timeoutMs?: number | undefined;
}

/**
 * One statement, as every path hands it to the query service: an agent's run_query, a curated
 * tool's, a catalog's generated SQL and explain's. Parameter and context values are bound by
 * the driver, never placed in the text.
 */
export interface Statement extends StatementTarget {
  readonly sql: string;
  readonly params?: readonly Param[] | undefined;
  /** At most this many rows come back (`truncated` says when there were more); else the default. */
  readonly maxRows?: number | undefined;
  /** The driver stops reading rows past this many bytes: they could never be shown. */
  readonly maxBytes?: number | undefined;
  /** The caller's context values; checked against the connection's declared names before any borrow. */
  readonly context?: Readonly<Record<string, string>> | undefined;
  /** Runs in a read-only transaction that is rolled back; false only for a write the policy allowed. */
  readonly readOnly: boolean;
  /** A read's plan estimate is checked against this first (`hanactl set --max-cost`). */
  readonly costGuard?: CostGuard | undefined;
  /** What the policy found the statement names (PostgreSQL), resolved by the server before it runs. */
  readonly references?: StatementReferences | undefined;
}
