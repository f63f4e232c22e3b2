import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import { randomHex } from '../../shared/random-hex.js';
import type { ApprovalDecision, CancelResult, RunningQuery } from '../../shared/schemas.js';
import type { AuditSink } from '../audit/audit-log.js';
import type { AuditEntry } from '../audit/audit-store.js';

/** Who made a call, from the session table (absent when the caller named no session). */
export interface CallSession {
  readonly id: string;
  readonly client: { readonly name: string; readonly version?: string | undefined };
}

/**
 * What the tracker knows about a call before it runs. Never parameter or context values: only a
 * write that waits for a person gets the values it is shown (`waiting`), kept with the decision.
 */
export interface CallInfo {
  readonly connection: string;
  readonly statement: string;
  readonly paramCount: number;
  readonly tool?: string | undefined;
  readonly session?: CallSession | undefined;
  /** The project folder the call ran for. */
  readonly project?: string | undefined;
  /** The signed-in person who made the call (MCP over HTTP with OAuth). */
  readonly person?: CallPerson | undefined;
}

/** A signed-in caller as the audit trail names them. */
export interface CallPerson {
  readonly subject: string;
  readonly issuer: string;
}

/** What a finished call returned, for the audit record. */
export interface CallSummary {
  readonly rows?: number;
  readonly truncated?: boolean;
}

export interface CallTrackerOptions {
  /** Receives one record per finished call; none when absent. */
  readonly audit?: AuditSink;
  /** `cancel` waits at most this long for the statement to stop before it answers. */
  readonly cancelWaitMillis?: number;
  readonly now?: () => Date;
}

interface InFlight {
  readonly id: string;
  readonly info: CallInfo;
  readonly startedAt: Date;
  readonly controller: AbortController;
  readonly done: Promise<void>;
  cancelling: boolean;
  /** While a write waits for a person: its timeout and when it expires. */
  awaiting?: { readonly timeoutSeconds: number; readonly expiresAt: Date } | undefined;
  /** The parameter values a person is (or was) shown: listed while it waits, kept for the audit record of the decision. */
  shownParams?: readonly string[] | undefined;
  /** How a wait for a person ended, for the audit record. */
  approval?: ApprovalDecision | undefined;
}

/** How much of a running statement `hanactl queries` shows. */
export const SQL_PREVIEW_CHARS = 200;

/**
 * The calls running now, and the audit record of each when it ends. `track` gives the call an
 * id and an AbortController of its own, linked to the caller's signal (the HTTP request): either
 * a client that goes away or an operator's `cancel` aborts the statement, and the drivers cancel
 * it on the server.
 */
export class CallTracker {
  readonly #running = new Map<string, InFlight>();
  readonly #audit: AuditSink | undefined;
  readonly #cancelWaitMs: number;
  readonly #now: () => Date;

  constructor(options: CallTrackerOptions = {}) {
    this.#audit = options.audit;
    this.#cancelWaitMs = options.cancelWaitMillis ?? 5000;
    this.#now = options.now ?? (() => new Date());
  }

  /** Runs `run` as a tracked call: listed while it runs, cancellable by id, audited when it ends. */
  async track<T>(
    info: CallInfo,
    signal: AbortSignal | undefined,
    run: (signal: AbortSignal, queryId: string) => Promise<T>,
    summarize: (result: T) => CallSummary,
  ): Promise<T> {
    const id = this.#newId();
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    let finish!: () => void;
    const call: InFlight = { id, info, startedAt: this.#now(), controller, done: new Promise((r) => (finish = r)), cancelling: false };
    this.#running.set(id, call);
    const started = performance.now();
    const entry = (end: Pick<AuditEntry, 'outcome' | 'errorCode' | 'rule' | 'rows' | 'truncated'>): AuditEntry => ({
      ...describe(call),
      durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      ...end,
      ...(call.approval ? { approval: call.approval } : {}),
    });
    try {
      const result = await run(controller.signal, id);
      const summary = summarize(result);
      this.#audit?.record(
        entry({ outcome: 'ok', errorCode: null, rule: null, rows: summary.rows ?? null, truncated: summary.truncated ?? null }),
      );
      return result;
    } catch (err) {
      const code = isHanactlError(err) ? err.code : 'INTERNAL';
      const refused = code === 'STATEMENT_REFUSED';
      const rule = refused && isHanactlError(err) ? (err.details.rule ?? null) : null;
      this.#audit?.record(entry({ outcome: refused ? 'refused' : 'error', errorCode: code, rule, rows: null, truncated: null }));
      if (call.cancelling && code === 'QUERY_CANCELLED' && call.approval?.decision !== 'cancelled') {
        throw new HanactlError(
          'QUERY_CANCELLED',
          `A person cancelled this statement with \`${cliCommand()} cancel\`; it was stopped on the server. Do not retry it unchanged.`,
        );
      }
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#running.delete(id);
      finish();
    }
  }

  /** The calls running now, oldest first. */
  list(): RunningQuery[] {
    const now = this.#now().getTime();
    return [...this.#running.values()].map((c) => ({
      id: c.id,
      session: c.info.session?.id ?? null,
      client: c.info.session?.client.name ?? null,
      connection: c.info.connection,
      tool: c.info.tool ?? null,
      startedAt: c.startedAt.toISOString(),
      ageMs: Math.max(0, now - c.startedAt.getTime()),
      // A write waiting for a person shows whole: the person decides on what would run.
      sql: c.awaiting ? c.info.statement : c.info.statement.slice(0, SQL_PREVIEW_CHARS),
      cancelling: c.cancelling,
      ...(c.awaiting
        ? {
            awaitingApproval: {
              timeoutSeconds: c.awaiting.timeoutSeconds,
              expiresAt: c.awaiting.expiresAt.toISOString(),
              leftMs: Math.max(0, c.awaiting.expiresAt.getTime() - now),
            },
            params: [...(c.shownParams ?? [])],
          }
        : {}),
    }));
  }

  /** A tracked write now waits for a person (listed so by `list`). */
  waiting(id: string, pending: { timeoutSeconds: number; expiresAt: Date; params: readonly string[] }): void {
    const call = this.#running.get(id);
    if (!call) return;
    call.awaiting = { timeoutSeconds: pending.timeoutSeconds, expiresAt: pending.expiresAt };
    call.shownParams = pending.params;
  }

  /** A tracked write's wait ended: its audit record carries the decision. */
  decided(id: string, decision: ApprovalDecision): void {
    const call = this.#running.get(id);
    if (!call) return;
    call.awaiting = undefined;
    // The record says what the person decided on: the statement, and the values it was to run with.
    call.approval = call.shownParams && call.shownParams.length > 0 ? { ...decision, params: [...call.shownParams] } : decision;
  }

  /**
   * Aborts a running call (the driver cancels it on the server) and waits up to
   * `cancelWaitMillis` for it to end. An unknown or finished id is NOT_FOUND.
   */
  async cancel(id: string): Promise<CancelResult> {
    const call = this.#running.get(id);
    if (!call)
      throw new HanactlError(
        'NOT_FOUND',
        `No statement with id ${JSON.stringify(id)} is running; \`${cliCommand()} queries\` lists those that are.`,
      );
    call.cancelling = true;
    call.controller.abort(new HanactlError('QUERY_CANCELLED', 'Cancelled by a person.'));
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      call.done.then(() => true),
      new Promise<boolean>((r) => {
        timer = setTimeout(() => r(false), this.#cancelWaitMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    return { id, cancelled: true, stopped };
  }

  #newId(): string {
    for (;;) {
      const id = randomHex(4);
      if (!this.#running.has(id)) return id;
    }
  }
}

function describe(call: InFlight): Omit<AuditEntry, 'durationMs' | 'outcome' | 'errorCode' | 'rule' | 'rows' | 'truncated'> {
  const { info } = call;
  return {
    at: call.startedAt.toISOString(),
    queryId: call.id,
    session: info.session?.id ?? null,
    client: info.session?.client.name ?? null,
    clientVersion: info.session?.client.version ?? null,
    project: info.project ?? null,
    connection: info.connection,
    tool: info.tool ?? null,
    statement: info.statement,
    paramCount: info.paramCount,
    ...(info.person ? { subject: info.person.subject, issuer: info.person.issuer } : {}),
  };
}
