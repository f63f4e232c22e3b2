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
import type { DriverConnection, ExecuteOptions } from '../engines/driver.js';
import { costGuardUnavailable } from '../engines/index.js';
import type { StatementReferences } from '../policy/types.js';
import type { Pool } from '../pools/pool.js';
import type { ConnectionRecord } from '../registry/connection-record.js';
import { costGuardOf, costGuardWithContext } from './cost-guard.js';
import { privilegeAdvice } from './privilege-advice.js';
import { capQueryResult, type ResultBudget, resultBudget } from './result-cap.js';
import type { ResolveScope, Statement, StatementTarget } from './statement.js';

export type { ResolveScope, Statement, StatementTarget } from './statement.js';

/** Runs one statement of a checked read (QueryService.checkedRead); its rows come back whole. */
export type CheckedExecutor = (sql: string, params: readonly Param[], maxRows: number) => Promise<QueryResult>;

/** Text the agent chose that the server parses, plans or runs outside run_query (QueryService.checkedRead). */
export interface CheckedRead extends StatementTarget {
  /** The text the policy judges; the statements run place it as it is. */
  readonly sql: string;
  /** What the call is, as a refusal names it: `free SQL (explain_query)`. */
  readonly what: string;
  /** The caller's context values, set around each statement as for run_query. */
  readonly context?: Readonly<Record<string, string>> | undefined;
  /** The statements must write (SAP HANA's EXPLAIN PLAN): one borrowed connection, autocommit. */
  readonly writes?: boolean;
}

/** Decides before any network work whether a statement may run, and as what. */
export interface StatementPolicy {
  /**
   * Returns the kind of statement (with what it names, where the policy parsed it: PostgreSQL), or
   * throws (or rejects with) STATEMENT_REFUSED.
   */
  check(
    sql: string,
    options: {
      dialect: Engine;
      allowWrite: boolean;
      database?: string;
      unsignedContext?: boolean;
      rowSeparation?: boolean;
      sharedLogin?: boolean;
    },
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
  /**
   * The other registered connections that may run as `record`'s login (the same engine and user:
   * sameLogin). One with context names makes `record`, without them, refuse schema changes.
   */
  readonly sameLoginAs?: (record: ConnectionRecord) => readonly ConnectionRecord[];
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
    const { kind, references } = await this.#check(record, request.sql, {
      curated: options.curated === true,
      allowWrite: record.allowWrite,
    });
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
      params: request.params,
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
   * The one way text the agent chose reaches the server outside run_query: explain_query's
   * statement, which the server plans (and planning runs code: PostgreSQL folds an IMMUTABLE
   * function with constant arguments and calls a STABLE one to estimate a condition), and
   * sample_rows' statement, built around a table the agent named. `request.sql` passes the layers
   * run_query's text passes, in the same order: refused on a curated-only connection, judged by
   * the statement policy as a read with the connection's own options (its database, the rules
   * where rows are separated), a write refused; then `work` runs its statements, each carrying
   * what the policy found the text names, so that on PostgreSQL the resolve step runs first in the
   * same read-only, rolled-back transaction. `work` is given the checked text to place in them.
   *
   * With `writes` (SAP HANA's `EXPLAIN PLAN`, which stores rows in EXPLAIN_PLAN_TABLE, reads them
   * back and deletes them) the statements all go to one borrowed connection and may write
   * (autocommit), and no context values are set (a plan returns no rows); the driver still clears
   * any an earlier borrower left.
   */
  async checkedRead<T>(request: CheckedRead, work: (run: CheckedExecutor, sql: string) => Promise<T>): Promise<T> {
    const record = this.#deps.resolve(request.connection, request.scope);
    refuseOnCuratedOnly(record, request.what);
    const { kind, references } = await this.#check(record, request.sql, { curated: false, allowWrite: false });
    if (kind === 'write') {
      throw new HanactlError('STATEMENT_REFUSED', `Refused: this statement writes, and ${request.what} takes reads only.`, {
        rule: 'explain-write',
        hint: 'Ask for the SELECT part instead.',
      });
    }
    const { connection, scope, signal, timeoutMs } = request;
    const target = { connection, ...(scope ? { scope } : {}), ...(signal ? { signal } : {}), ...(timeoutMs ? { timeoutMs } : {}) };
    if (request.writes) {
      const options = this.#options(record, { ...target, readOnly: false, ...(references ? { references } : {}) }, {});
      return this.#borrow(record, signal, (borrowed) =>
        work(async (sql, params, maxRows) => {
          const started = performance.now();
          const result = await borrowed.execute(sql, params, { ...options, maxRows });
          return { ...result, durationMs: Math.round((performance.now() - started) * 1000) / 1000 };
        }, request.sql),
      );
    }
    const run: CheckedExecutor = (sql, params, maxRows) =>
      this.#execute(record, { ...target, sql, params, maxRows, context: request.context, readOnly: true, references });
    return work(run, request.sql);
  }

  /**
   * The statement policy's verdict on text the agent chose (or a person's curated statement) on
   * `record`: every path that sends such text to the server asks here, with the same options.
   */
  async #check(
    record: ConnectionRecord,
    sql: string,
    how: { readonly curated: boolean; readonly allowWrite: boolean },
  ): Promise<{ kind: 'read' | 'write'; references: StatementReferences | undefined }> {
    const checked = await this.#deps.policy.check(sql, {
      dialect: record.target.engine,
      allowWrite: how.allowWrite,
      ...(record.target.database ? { database: record.target.database } : {}),
      // A person's curated statement is theirs to trust; an agent's text may not add code on a connection with unsigned values.
      ...(!how.curated && record.context.length > 0 && !record.signedContext ? { unsignedContext: true } : {}),
      // Rows are separated by context values: the planner's figures would count the hidden ones.
      ...(!how.curated && record.context.length > 0 ? { rowSeparation: true } : {}),
      // Another connection's rows are separated under this login: what this one makes, they meet.
      ...(!how.curated && record.context.length === 0 && how.allowWrite && this.#peers(record).some((peer) => peer.context.length > 0)
        ? { sharedLogin: true }
        : {}),
    });
    return { kind: kindOf(checked), references: typeof checked === 'string' ? undefined : checked.references };
  }

  #peers(record: ConnectionRecord): readonly ConnectionRecord[] {
    return this.#deps.sameLoginAs?.(record) ?? [];
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
      ...(record.context.length > 0 ? { separated: true } : {}),
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
   * `advice` warns when the login can read credentials (a superuser, pg_read_all_data, SELECT on mysql.*),
   * and with context names when row-level security does not bind it (a superuser, BYPASSRLS, a table's owner).
   */
  async testRecord(record: ConnectionRecord): Promise<{ latencyMs: number; serverVersion?: string; advice?: string[] }> {
    const started = performance.now();
    const { pool } = await this.#deps.poolFor(record);
    return pool.use(async (connection) => {
      await connection.ping();
      const serverVersion = await connection.serverVersion();
      const latencyMs = Math.round((performance.now() - started) * 100) / 100;
      const advice = [
        ...(await privilegeAdvice(connection, record.target.engine, record.name, { separated: record.context.length > 0 })),
        ...sharedLoginAdvice(record, this.#peers(record)),
      ];
      return { latencyMs, ...(serverVersion ? { serverVersion } : {}), ...(advice.length > 0 ? { advice } : {}) };
    });
  }
}

/**
 * Advice when `record`'s login also backs connections that differ in whether they declare context
 * names: on one without them nothing separates rows (a condition there runs on rows a policy
 * hides), and a writable one refuses schema changes while one with them exists.
 */
function sharedLoginAdvice(record: ConnectionRecord, peers: readonly ConnectionRecord[]): string[] {
  const separated = record.context.length > 0;
  const others = peers.filter((peer) => peer.context.length > 0 !== separated).map((peer) => `"${peer.name}"`);
  if (others.length === 0) return [];
  const [withNames, without] = separated ? [`"${record.name}"`, others.join(', ')] : [others.join(', '), `"${record.name}"`];
  return [
    `The same login backs ${withNames}, which declares context names, and ${without}, which does not: rows are separated by context values only on the first, and an agent holding one without them can learn rows the policy hides (a condition there runs on them), while a writable one refuses schema changes. Register this login only with context names, and give other work a login of its own.`,
  ];
}

function refuseOnCuratedOnly(record: ConnectionRecord, what: string): void {
  if (!record.curatedOnly) return;
  throw new HanactlError(
    'FORBIDDEN',
    `The connection "${record.name}" is curated-only: it answers only its curated tools, not ${what}. Use one of its tools (list them with tools/list); a person can allow free SQL with \`${cliCommand()} set ${record.name} --no-curated-only\`.`,
  );
}
