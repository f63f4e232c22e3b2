import type { WaitHooks } from '../../shared/approval.js';
import { cliCommand } from '../../shared/cli-command.js';
import type { Engine } from '../../shared/connection-url.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import {
  type ApprovalDecision,
  DEFAULT_APPROVAL_TIMEOUT_SECONDS,
  DEFAULT_MAX_ROWS,
  DEFAULT_TIMEOUT_MS,
  type Param,
  type QueryRequest,
  type QueryResult,
} from '../../shared/schemas.js';
import type { ApprovalDesk } from '../approvals/approval-desk.js';
import { resolveContextValues } from '../context/context-values.js';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../engines/driver.js';
import { costGuardUnavailable } from '../engines/index.js';
import type { StatementReferences } from '../policy/types.js';
import type { Pool } from '../pools/pool.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import { costGuardOf, costGuardWithContext } from './cost-guard.js';
import { privilegeAdvice } from './privilege-advice.js';
import { capQueryResult, type ResultBudget, resultBudget } from './result-cap.js';
import type { ResolveScope, Statement, StatementTarget } from './statement.js';

export type { ResolveScope, Statement, StatementTarget } from './statement.js';

/** Runs one more statement on the borrowed connection: hanactl's own SQL; its rows come back whole. */
export type SessionExecutor = (sql: string, params: readonly Param[], maxRows: number) => Promise<StatementResult['rows']>;

/** Decides before any network work whether a statement may run, and as what. */
export interface StatementPolicy {
  /**
   * Returns the kind of statement (with what it names, where the policy parsed it: PostgreSQL), or
   * throws (or rejects with) STATEMENT_REFUSED.
   */
  check(
    sql: string,
    options: { dialect: Engine; allowWrite: boolean; database?: string; unsignedContext?: boolean; rowSeparation?: boolean },
  ): Checked | Promise<Checked>;
}

/** A statement the policy accepted. */
export type Checked = 'read' | 'write' | { readonly kind: 'read' | 'write'; readonly references?: StatementReferences };

/** The kind of an accepted statement. */
export const kindOf = (checked: Checked): 'read' | 'write' => (typeof checked === 'string' ? checked : checked.kind);

export interface QueryServiceDeps {
  /** Registry names resolve alone; `project:<name>` needs the scope's project. */
  resolve(name: string, scope?: ResolveScope): ConnectionRecord;
  poolFor(record: ConnectionRecord): Promise<{ pool: Pick<Pool, 'use'> }>;
  readonly policy: StatementPolicy;
  readonly defaultTimeoutMs?: number;
  /** Where writes on a connection with `--approve-writes` wait for a person; without it such writes are refused. */
  readonly approvals?: Pick<ApprovalDesk, 'wait'>;
}

/** How one call runs: a curated tool's, and the call's id and hooks for a write that waits for a person. */
export interface RunOptions {
  readonly curated?: boolean;
  /** The tracked call's id: the id a person approves or denies. */
  readonly queryId?: string;
  readonly approval?: WaitHooks;
}

/**
 * One tool call, daemon side: resolve the connection, apply the policy (no connection is
 * borrowed for a refused statement), borrow, execute with a timeout and row cap, release.
 */
export class QueryService {
  readonly #deps: QueryServiceDeps;

  constructor(deps: QueryServiceDeps) {
    this.#deps = deps;
  }

  /**
   * `curated`: the statement is a curated tool's, bound from the registry (CuratedService.bind);
   * only such calls reach a curated-only connection. Both take the same path from here on.
   */
  async run(request: QueryRequest, signal?: AbortSignal, options: RunOptions = {}): Promise<QueryResult> {
    const record = this.#deps.resolve(request.connection, {
      ...(request.project ? { project: request.project } : {}),
      ...(request.session ? { session: request.session } : {}),
    });
    if (!options.curated) refuseOnCuratedOnly(record, 'free SQL');
    const checked = await this.#deps.policy.check(request.sql, {
      dialect: record.target.engine,
      allowWrite: record.allowWrite,
      ...(record.target.database ? { database: record.target.database } : {}),
      // A person's curated statement is theirs to trust; an agent's text may not add code on a connection with unsigned values.
      ...(!options.curated && record.context.length > 0 && !record.signedContext ? { unsignedContext: true } : {}),
      // Rows are separated by context values: the planner's figures would count the hidden ones.
      ...(!options.curated && record.context.length > 0 ? { rowSeparation: true } : {}),
    });
    const kind = kindOf(checked);
    const references = typeof checked === 'string' ? undefined : checked.references;
    // Before any connection is borrowed: a waiting write holds none, so reads go on meanwhile.
    const approval =
      kind === 'write' && record.allowWrite && record.approveWrites ? await this.#approve(record, request, signal, options) : undefined;
    // Cut here, before anything serializes the rows: every transport gets the capped result.
    const guard = kind === 'read' ? costGuardOf(record) : undefined;
    // A limit kept across `hanactl add --replace` onto an engine with no estimate cannot be held.
    const unavailable = guard && costGuardUnavailable(record.target.engine);
    if (guard && unavailable) throw guard.unavailable(unavailable);
    // A limit set before `set` refused it with context names: its yes/no would reveal hidden rows.
    if (guard && record.context.length > 0) throw guard.unavailable(costGuardWithContext(record.name));
    const budget = resultBudget(record.name, record.maxResultBytes);
    // Rows past the budget could never be shown: the driver stops reading them.
    const result = await this.#execute(record, {
      connection: request.connection,
      sql: request.sql,
      params: request.params,
      maxRows: request.maxRows,
      timeoutMs: request.timeoutMs,
      context: request.context,
      readOnly: kind === 'read' || !record.allowWrite,
      signal,
      costGuard: guard,
      references,
      maxBytes: budget.bytes,
    });
    const capped = capQueryResult(result, budget);
    return approval ? { ...capped, approval } : capped;
  }

  /** Waits for a person's approval of a write; throws unless it was approved. */
  async #approve(
    record: ConnectionRecord,
    request: QueryRequest,
    signal: AbortSignal | undefined,
    options: RunOptions,
  ): Promise<ApprovalDecision> {
    const { approvals } = this.#deps;
    if (!approvals || options.queryId === undefined) {
      throw new HanactlError(
        'FORBIDDEN',
        `Writes on "${record.name}" need a person's approval, which this way of calling cannot ask for; use an MCP session.`,
      );
    }
    const write = {
      queryId: options.queryId,
      connection: record.name,
      sql: request.sql,
      timeoutSeconds: record.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS,
    };
    return approvals.wait(write, signal, options.approval);
  }

  /**
   * Refuses what a curated-only connection does not answer beyond its curated tools: the catalog's
   * explain_query (free SQL) and sample_rows (any table's rows) ask here first.
   */
  assertFreeAccess(connection: string, scope: ResolveScope | undefined, what: string): void {
    refuseOnCuratedOnly(this.#deps.resolve(connection, scope), what);
  }

  /** How many bytes one tool result on this connection may carry (catalog answers use it too). */
  budgetOf(connection: string, scope?: ResolveScope): ResultBudget {
    const record = this.#deps.resolve(connection, scope);
    return resultBudget(record.name, record.maxResultBytes);
  }

  /**
   * Runs SQL that hanactl itself generated (catalog queries) with identifiers already bound
   * or validated: the statement validator is skipped, the read-only transaction is not. Rows
   * come back whole (catalog code reads them); the caller caps what it answers.
   */
  async runTrusted(statement: Omit<Statement, 'readOnly' | 'costGuard' | 'references' | 'maxBytes'>): Promise<QueryResult> {
    const record = this.#deps.resolve(statement.connection, statement.scope);
    return this.#execute(record, { ...statement, maxRows: statement.maxRows ?? 1000, readOnly: true });
  }

  /**
   * Runs `work` with an executor whose statements all go to one borrowed connection and may write
   * (autocommit). Only for statements a catalog generated; today that is SAP HANA's explain,
   * whose `EXPLAIN PLAN` stores rows in EXPLAIN_PLAN_TABLE, reads them back and deletes them (the
   * explained statement has passed the read-only validator and is only planned). No context
   * values are set (a plan returns no rows); the driver still clears any an earlier borrower left.
   */
  async runTrustedWrites<T>(target: StatementTarget, work: (run: SessionExecutor) => Promise<T>): Promise<T> {
    const record = this.#deps.resolve(target.connection, target.scope);
    const options = this.#options(record, { ...target, readOnly: false }, {});
    return this.#borrow(record, target.signal, (connection) =>
      work(async (sql, params, maxRows) => (await connection.execute(sql, params, { ...options, maxRows })).rows),
    );
  }

  /** True when the connection separates rows by context values (it declares context names). */
  separatesRows(connection: string, scope?: ResolveScope): boolean {
    return this.#deps.resolve(connection, scope).context.length > 0;
  }

  /** The engine of a connection (for engine-specific catalog SQL). */
  engineOf(connection: string, scope?: ResolveScope): Engine {
    return this.#deps.resolve(connection, scope).target.engine;
  }

  /** One statement on a borrowed connection, its duration counted from before the borrow. */
  async #execute(record: ConnectionRecord, statement: Statement): Promise<QueryResult> {
    // Refused before any connection is borrowed, like a refused statement.
    const context = resolveContextValues({
      declared: record.context,
      supplied: statement.context ?? {},
      engine: record.target.engine,
      strict: false,
      connection: record.name,
    });
    const options = { ...this.#options(record, statement, context), maxRows: statement.maxRows ?? DEFAULT_MAX_ROWS };
    const started = performance.now();
    const result = await this.#borrow(record, statement.signal, (connection) =>
      connection.execute(statement.sql, statement.params ?? [], options),
    );
    return { ...result, durationMs: Math.round((performance.now() - started) * 1000) / 1000 };
  }

  /** What the driver is told for each statement of a call, the row cap aside. */
  #options(
    record: ConnectionRecord,
    call: Pick<Statement, 'timeoutMs' | 'readOnly' | 'signal' | 'costGuard' | 'references' | 'maxBytes'>,
    context: Readonly<Record<string, string>>,
  ): Omit<ExecuteOptions, 'maxRows'> {
    return {
      timeoutMs: call.timeoutMs ?? this.#deps.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS,
      readOnly: call.readOnly,
      context,
      ...(record.signedContext && record.contextKey ? { contextKey: record.contextKey } : {}),
      ...(call.signal ? { signal: call.signal } : {}),
      ...(call.costGuard ? { costGuard: call.costGuard } : {}),
      ...(call.references ? { references: call.references } : {}),
      ...(call.maxBytes ? { maxBytes: call.maxBytes } : {}),
    };
  }

  /** `work` on a connection of `record`'s pool under the pool's borrow rule; a driver's bare error is a QUERY_FAILED. */
  async #borrow<T>(
    record: ConnectionRecord,
    signal: AbortSignal | undefined,
    work: (connection: DriverConnection) => Promise<T>,
  ): Promise<T> {
    const { pool } = await this.#deps.poolFor(record);
    try {
      return await pool.use(work, signal);
    } catch (err) {
      throw isHanactlError(err) ? err : new HanactlError('QUERY_FAILED', err instanceof Error ? err.message : String(err));
    }
  }

  /** Opens (or borrows) a connection and proves it answers. */
  async test(name: string): Promise<{ latencyMs: number; serverVersion?: string; advice?: string[] }> {
    return this.testRecord(this.#deps.resolve(name));
  }

  /**
   * Opens (or borrows) a connection for `record`, which need not be registered, and pings it.
   * `advice` warns when the login can read credentials (a superuser, pg_read_all_data, SELECT on mysql.*).
   */
  async testRecord(record: ConnectionRecord): Promise<{ latencyMs: number; serverVersion?: string; advice?: string[] }> {
    const started = performance.now();
    const { pool } = await this.#deps.poolFor(record);
    return pool.use(async (connection) => {
      await connection.ping();
      const serverVersion = await connection.serverVersion();
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      const advice = await privilegeAdvice(connection, record.target.engine, record.name);
      return { latencyMs, ...(serverVersion ? { serverVersion } : {}), ...(advice.length > 0 ? { advice } : {}) };
    });
  }
}

function refuseOnCuratedOnly(record: ConnectionRecord, what: string): void {
  if (!record.curatedOnly) return;
  throw new HanactlError(
    'FORBIDDEN',
    `The connection "${record.name}" is curated-only: it answers only its curated tools, not ${what}. Use one of its tools (list them with tools/list); a person can allow free SQL with \`${cliCommand()} set ${record.name} --no-curated-only\`.`,
  );
}
