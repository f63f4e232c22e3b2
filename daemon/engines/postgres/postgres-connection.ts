import { HanactlError } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import { contextChanged, contextNotKept, contextUnavailable } from '../context-unavailable.js';
import { maskCellValue } from '../credential-mask.js';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../driver.js';
import { normaliseDriverError } from '../scrub.js';
import { StatementWatch } from '../statement-watch.js';
import { statementCancelled, statementTimedOut } from '../stop-errors.js';
import { setCell, toJsonValue, uniqueColumnNames } from '../values.js';
import { type BatchResult, BatchStepError, PgBatch, type PgRowParser } from './postgres-batch.js';
import {
  type CallPlan,
  changedMarker,
  costGate,
  notKeptMarker,
  planCall,
  planOpening,
  ROLE_CHANGED_MARKER,
  ROLE_MARKER,
} from './postgres-call.js';
import { sendCancelRequest } from './postgres-cancel.js';
import { REMOTE_DISCONNECT_ALL, ScrubQuery } from './postgres-cleanup.js';
import { notAsLogin, roleChanged } from './postgres-login-role.js';
import { nextStage, type ResolveStage, resolveRefusal, resolvesFurther } from './postgres-resolve.js';
import { pgTypeName } from './postgres-type-names.js';
import type { CorkableStream, PgClient } from './postgres-types.js';
import { WalkMemo } from './postgres-walk-memo.js';

/** How long a cancel may take before the connection is abandoned instead. */
export const CANCEL_GRACE_MS = 1000;
/** How often a cancel is sent again while the statement still runs. */
export const CANCEL_REPEAT_MS = 150;
/** How long past the call's timeout the client-side deadline lies: the server's `statement_timeout` fires first. */
const SERVER_FIRST_MS = 1000;
/**
 * While a given-up connection waits for its server session to end, TCP keepalive probes start
 * after this long idle: a server that vanished from the network is noticed, one whose backend
 * still runs answers them.
 */
const ENDING_KEEPALIVE_MS = 10_000;

/** A check asked to resolve further (#call); execute makes the call again at the next stage. */
const RESOLVE_FURTHER = new Error('The statement names what needs a further resolve stage.');

/** Cancels the statement a backend runs, from a second session (cancel). */
export const CANCEL_BACKEND = 'SELECT pg_catalog.pg_cancel_backend($1)';
/** Ends the backend of a connection given up on, from a second session (#abandon). */
export const TERMINATE_BACKEND = 'SELECT pg_catalog.pg_terminate_backend($1)';

/** Opens a second, short-lived client; used to cancel a statement from outside. */
export type PgSideChannel = () => Promise<PgClient>;

/** What a batch needs of `pg` beyond the client: its value encoding and its row parser. */
export interface PgWireKit {
  prepareValue(value: unknown): string | Buffer | null;
  rowParser(): PgRowParser;
}

interface PgErrorLike {
  code?: string;
  message?: string;
}

/**
 * One PostgreSQL session. Every call is one batch in one round trip (planCall, PgBatch): its own
 * transaction — a read is `BEGIN READ ONLY` and always rolled back — with a transaction-local
 * `statement_timeout` that makes the server itself stop a runaway statement, context values set
 * before the statement and checked after it, and the session cleaned before the connection goes
 * back to its pool. A client-side timer cancels with `pg_cancel_backend` should the server not answer.
 * It holds no password: the agent shapes what its errors quote, so they are masked by shape only
 * (scrub.ts), and nothing it builds or sends after the connect carries a password or a key.
 *
 * Behind a pooler (`pooled`: the pid the session announced is not its backend's, as with
 * PgBouncer) nothing is assumed about which backend runs a call: cancels go as the protocol's
 * CancelRequest, which the pooler forwards to the right backend, and a call that signs context
 * values learns its backend's pid inside its transaction (planOpening).
 */
export class PostgresConnection implements DriverConnection {
  readonly #client: PgClient;
  readonly #wire: PgWireKit;
  readonly #sideChannel: PgSideChannel;
  #broken = false;
  /**
   * Rejects once the connection is gone (the server ended the session, the socket dropped).
   * A custom query is not always told when the connection dies between CommandComplete and
   * ReadyForQuery, so batches race this.
   */
  readonly #onLost = new Set<(err: unknown) => void>();
  #lostCause: unknown;
  /** A call failed part-way: the session may hold state until the next reset. */
  #dirty = false;
  readonly #pooled: boolean;
  /** Each call asks the server to check that this client is still there (planCall): a statement whose cancel is lost ends once the connection is closed. */
  readonly #checksClient: boolean;
  /** How far each set of names needed its resolve step to go on this session (postgres-walk-memo.ts). */
  readonly #walks = new WalkMemo();
  /**
   * The last round trip sent, settled once its answer is in or the connection is gone: while it
   * runs, the server session is busy with it (close() waits for it).
   */
  #running: Promise<void> | undefined;

  constructor(client: PgClient, wire: PgWireKit, sideChannel: PgSideChannel, pooled = false, checksClient = false) {
    this.#checksClient = checksClient;
    this.#client = client;
    this.#pooled = pooled;
    this.#wire = wire;
    this.#sideChannel = sideChannel;
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

  /**
   * Sends one round trip: settles as `work` does, or rejects as soon as the connection is lost or
   * `watch` gives the statement up. The round trip is tracked (#running) until it really ends.
   */
  #send<T>(work: Promise<T>, watch?: StatementWatch): Promise<T> {
    const running = work.then(
      () => {},
      () => {},
    );
    this.#running = running;
    void running.then(() => {
      if (this.#running === running) this.#running = undefined;
    });
    const answer = this.#unlessLost(work);
    return watch ? watch.race(answer) : answer;
  }

  get broken(): boolean {
    return this.#broken;
  }

  async execute(sql: string, params: readonly Param[], options: ExecuteOptions): Promise<StatementResult> {
    // A call cancelled before it started sends nothing: a cancel request could reach the server before the statement.
    if (options.signal?.aborted) throw statementCancelled();
    const values = params.map((v) => this.#wire.prepareValue(v));
    const references = options.references;
    let stage = this.#walks.stage(references);
    if (!references || stage === 'walk') return this.#call(sql, values, options, stage);
    const started = performance.now();
    const limited = Number.isFinite(options.timeoutMs) && options.timeoutMs > 0;
    for (;;) {
      // A later stage runs in what is left of the call's time (a limit that is not a positive number is none).
      const timeoutMs = limited ? Math.max(1, options.timeoutMs - (performance.now() - started)) : options.timeoutMs;
      try {
        return await this.#call(sql, values, stage === 'first' ? options : { ...options, timeoutMs }, stage);
      } catch (err) {
        if (err !== RESOLVE_FURTHER) throw err;
      }
      // The check found a view, a function created since initdb, ...: the call again, one stage further.
      stage = nextStage(stage, references);
      this.#walks.add(references, stage);
      if (options.signal?.aborted) throw statementCancelled();
    }
  }

  /**
   * One call, as one batch; its resolve step goes as far as `stage`, and a check's asking to go
   * further ends the call (rolled back, before the statement) with RESOLVE_FURTHER.
   */
  async #call(sql: string, values: (string | Buffer | null)[], options: ExecuteOptions, stage: ResolveStage): Promise<StatementResult> {
    const signs = options.contextKey !== undefined && Object.keys(options.context ?? {}).length > 0;
    let plan: CallPlan | undefined;
    try {
      if (!(this.#pooled && signs))
        plan = planCall(sql, values, options, this.#client.processID, false, this.#checksClient, stage, this.#pooled, this.#client.user);
    } catch (err) {
      throw normaliseDriverError(err, 'QUERY_FAILED');
    }
    const stopWatch = this.#watch(options);
    const guard = options.costGuard;
    let gate: ReturnType<typeof costGate> | undefined;
    try {
      plan ??= await this.#openForSigning(sql, values, options, stage, stopWatch);
      gate = guard && plan.explain >= 0 ? costGate(plan, guard.maxCost) : undefined;
      // Rows past the result cap are cancelled on the server, for a read only (a write must
      // commit) and only without context values (their read-back after the statement must run).
      const cuts = options.readOnly && plan.readBack < 0;
      const batch = new PgBatch(plan.steps, this.#wire.rowParser(), gate, cuts ? () => stopWatch.interrupt() : undefined);
      let answer: BatchResult;
      try {
        answer = await this.#send(this.#client.query(batch).done, stopWatch);
      } catch (err) {
        if (stopWatch.interrupted && stopWatch.reason === undefined) {
          // Cancelled past the cap (or, if the cancel did not take, the connection abandoned): the
          // answer is the rows kept; the read's transaction is rolled back with the clean-up.
          await stopWatch.stop();
          await this.#scrub();
          return this.#answer(batch.partial, options.maxRows);
        }
        // A step after the transaction's end failed (the clean-up): the call's answer stands.
        if (!(err instanceof BatchStepError) || err.step <= plan.end) throw err;
        answer = err.partial;
        await stopWatch.stop();
        if (err.step <= plan.cleaned) await this.#scrub();
        else this.#dirty = true; // only the question about dblink and postgres_fdw went unanswered
      }
      if (answer.firstRows.get(plan.remoteLinks)?.[0] === 't') await this.#simple(REMOTE_DISCONNECT_ALL).catch(() => (this.#dirty = true));
      if (!gate?.refused()) return this.#answer(answer, options.maxRows);
    } catch (err) {
      const further =
        plan && stage !== 'walk' && err instanceof BatchStepError && err.step === plan.resolve && resolvesFurther(err.message);
      const error = further ? RESOLVE_FURTHER : plan ? this.#stepError(err, plan, stopWatch) : this.#normalise(err, stopWatch);
      // The server skipped the rest of the batch: end the transaction it may have left open, and
      // clean the session, on the backend the call ran on (no cancel may reach the clean-up).
      await stopWatch.stop();
      await this.#scrub();
      throw error;
    } finally {
      await stopWatch.stop();
    }
    // Refused by the cost guard: the statement never ran, and the call ended cleanly.
    const refused = gate?.refused();
    if (refused === 'unknown') throw guard?.unavailable('the PostgreSQL plan carried no total cost.');
    throw guard?.over(refused as number);
  }

  /**
   * Behind a pooler: opens the call's transaction, asks its backend for its pid, and plans the
   * rest of the call with the values signed for that backend.
   */
  async #openForSigning(
    sql: string,
    values: readonly (string | Buffer | null)[],
    options: ExecuteOptions,
    stage: ResolveStage,
    watch: StatementWatch,
  ): Promise<CallPlan> {
    const steps = planOpening(options);
    const opening = await this.#send(this.#client.query(new PgBatch(steps, this.#wire.rowParser())).done, watch);
    const pid = Number(opening.firstRows.get(steps.length - 1)?.[0]);
    if (!Number.isInteger(pid) || pid <= 0) throw new Error('The backend running this call did not say its pid.');
    return planCall(sql, values, options, pid, true, this.#checksClient, stage, false, this.#client.user);
  }

  /** The refusal or failure a failed step stands for, naming the context parameter where one is at fault. */
  #stepError(err: unknown, plan: CallPlan, watch: StatementWatch): HanactlError {
    this.#dirty = true;
    if (!(err instanceof BatchStepError)) return this.#normalise(err, watch);
    const cause = err.error;
    const sqlState = (cause as PgErrorLike).code;
    const message = (cause as PgErrorLike).message ?? '';
    if (err.step === plan.settings && message.includes(ROLE_MARKER)) {
      this.#broken = true;
      return notAsLogin();
    }
    if (err.step === plan.readBack && message.includes(ROLE_CHANGED_MARKER)) return roleChanged();
    if (err.step === plan.settings && watch.reason === undefined) {
      const notKept = plan.names.find((name) => message.includes(notKeptMarker(name)));
      if (notKept) return contextNotKept(notKept, 'set_config');
      // A lost connection is not the database refusing: the call's own handling reports it.
      if (!this.#broken && sqlState && !sqlState.startsWith('08') && sqlState !== '57P01' && plan.names.length > 0)
        return contextUnavailable('set_config', cause);
    }
    if (err.step === plan.resolve) {
      const refused = resolveRefusal(message);
      if (refused) return refused;
    }
    if (err.step === plan.readBack) {
      const changed = plan.names.find((name) => message.includes(changedMarker(name)));
      if (changed) return contextChanged(changed, 'set_config');
    }
    return this.#normalise(cause, watch);
  }

  /** The answer step's rows as the caller gets them: at most `maxRows`, JSON-safe, columns named uniquely. */
  #answer(answer: BatchResult, maxRows: number): StatementResult {
    const names = uniqueColumnNames(answer.fields.map((f) => f.name));
    const truncated = answer.rows.length > maxRows || answer.cut === true;
    const kept = truncated ? answer.rows.slice(0, maxRows) : answer.rows;
    const rows = kept.map((values) => {
      const row: Record<string, ReturnType<typeof toJsonValue>> = {};
      names.forEach((name, i) => {
        setCell(row, name, maskCellValue(toJsonValue(values[i])));
      });
      return row;
    });
    const columns = answer.fields.map((f, i) => ({ name: names[i] ?? f.name, type: pgTypeName(f.dataTypeID) }));
    const affected = answer.fields.length === 0 && typeof answer.rowCount === 'number' ? answer.rowCount : undefined;
    return { columns, rows, rowCount: rows.length, truncated, ...(affected !== undefined ? { affectedRows: affected } : {}) };
  }

  /**
   * The client-side guard: a deadline a little past the server's own timeout, the caller's
   * signal, and the result cap (`interrupt()` without a reason, once the rows kept fill it). Each
   * cancels on the server, again every CANCEL_REPEAT_MS while the call runs: a cancel
   * that reaches the backend while it is still reading the rest of the batch is dropped by the
   * server. If the cancel does not take within CANCEL_GRACE_MS (a backend busy where it does not
   * look for interrupts, such as the scanner on a long run of unterminated comments, or one
   * expression of many large numeric terms), the connection is abandoned: the call ends at once
   * with the timeout or cancellation it was given, and its backend is asked to terminate. A
   * connection abandoned so is broken and never goes back to its pool; its close resolves only
   * once the server session has ended (see close()), so the pool counts it until then.
   */
  #watch(options: ExecuteOptions): StatementWatch {
    const watch: StatementWatch = new StatementWatch({
      timeoutMs: options.timeoutMs,
      marginMs: SERVER_FIRST_MS,
      ...(options.signal ? { signal: options.signal } : {}),
      cancel: () => this.cancel(),
      repeatMs: CANCEL_REPEAT_MS,
      graceMs: CANCEL_GRACE_MS,
      abandon: async () => {
        this.#broken = true;
        // Behind a pooler the backend is not ours to terminate: one last cancel that has reached
        // the pooler, which takes when the backend next looks for interrupts; the client stays
        // linked to that backend until the statement's answer arrives (close()).
        if (this.#pooled) {
          await watch.idle();
          await this.cancel();
          return;
        }
        await this.#abandon();
      },
    });
    return watch;
  }

  /**
   * Gives up on a session whose cancel did not take: its backend is asked to terminate (best
   * effort), and the socket stays open: the server closes it when the backend exits, which is how
   * close() learns the session is gone. Should the terminate not be sent, the backend ends the
   * statement, and close() ends the session after it.
   */
  async #abandon(): Promise<void> {
    const pid = this.#client.processID;
    this.#broken = true;
    if (!pid) return;
    let side: PgClient | undefined;
    try {
      side = await this.#sideChannel();
      await side.query(TERMINATE_BACKEND, [pid]);
    } catch {
      // The backend ends the statement first; close() then ends the session.
    } finally {
      await side?.end().catch(() => {});
    }
  }

  /** Cancels the running statement on the server, from a second connection. */
  async cancel(): Promise<void> {
    const pid = this.#client.processID;
    if (!pid) return;
    if (this.#pooled) {
      const key = this.#client.secretKey;
      if (key === undefined) return;
      await sendCancelRequest(this.#client, pid, key).catch(() => {
        this.#broken = true;
      });
      return;
    }
    let side: PgClient | undefined;
    try {
      side = await this.#sideChannel();
      await side.query(CANCEL_BACKEND, [pid]);
    } catch {
      this.#broken = true;
    } finally {
      await side?.end().catch(() => {});
    }
  }

  /**
   * The one way a call that did not end cleanly ends, whatever ended it (a failed step, a cut at
   * the result cap, a timeout or cancel, a refusal, a lost connection), and the pool's reset of a
   * dirty connection: the transaction rolled back and the session cleaned in one message
   * (scrubMessage), on the backend the call ran on. Where that cannot be made sure of, the
   * connection is closed instead, and is broken: a lost one; behind a pooler, one whose session
   * is already outside any transaction (the pooler may have handed its backend to another client,
   * and this client's next message may reach another backend); one whose clean-up failed.
   */
  async #scrub(): Promise<void> {
    this.#dirty = true;
    if (this.#broken) {
      this.#destroy();
      return;
    }
    // Asked once the client is ready to send it: the status is then the one the call ended with.
    const scrub = new ScrubQuery(() => !(this.#pooled && this.#client.getTransactionStatus?.() === 'I'));
    try {
      if ((await this.#send(this.#client.query(scrub).done)) === 'clean') {
        this.#dirty = false;
        return;
      }
    } catch {
      // A part of the clean-up failed, or the connection did: closed below.
    }
    this.#destroy();
  }

  /**
   * The connection is broken (the pool drops it), and its socket is closed at once unless a round
   * trip still runs: a backend busy with a statement the call gave up on would not notice a closed
   * socket, so that one is left for close() to end once the server session has.
   */
  #destroy(): void {
    this.#broken = true;
    if (this.#running) return;
    const stream = this.#client.connection?.stream as { destroy?: (err?: Error) => void } | undefined;
    stream?.destroy?.();
  }

  async #simple(text: string): Promise<void> {
    try {
      await this.#send(this.#client.query(text));
    } catch (err) {
      throw this.#normalise(err);
    }
  }

  /** The error a failure stands for; `watch` is the call's, when it was a statement that failed. */
  #normalise(err: unknown, watch?: StatementWatch): HanactlError {
    this.#dirty = true;
    if (err instanceof HanactlError) return err;
    const e = err as PgErrorLike;
    const sqlState = typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
    if (!sqlState) this.#broken = true;
    if (watch?.reason === 'cancelled') return statementCancelled();
    if (sqlState === '57014' || watch?.reason === 'timeout') return statementTimedOut(watch?.timeoutMs, { sqlState: '57014' });
    if (sqlState?.startsWith('08') || sqlState === '57P01') this.#broken = true;
    if (!sqlState && (this.#lostCause !== undefined || isSocketError(err))) {
      // The socket dropped under the call (the server ended the session, a reset, a network
      // fault): no statement the agent could change would help, and the next call gets a new one.
      const cause = normaliseDriverError(err, 'CONNECT_FAILED').message;
      return new HanactlError(
        'CONNECT_FAILED',
        `The connection to PostgreSQL was lost during the call (${cause}); the pool opens a new one for the next call, which can be retried.`,
      );
    }
    return normaliseDriverError(err, 'QUERY_FAILED', sqlState ? { sqlState } : {});
  }

  async ping(): Promise<void> {
    await this.#simple('SELECT 1');
  }

  /** True after a call that failed part-way: the pool resets the connection when it is returned. */
  get dirty(): boolean {
    return this.#dirty;
  }

  async reset(): Promise<void> {
    // Every call ends by cleaning the session, in its batch or (#scrub) right after a failure,
    // so a reset costs no round trip unless that clean-up was left undone.
    if (!this.#dirty) return;
    await this.#scrub();
    if (this.#broken) {
      throw new HanactlError(
        'CONNECT_FAILED',
        'The PostgreSQL session could not be cleaned and was closed; the pool opens a new one for the next call.',
      );
    }
  }

  async serverVersion(): Promise<string | undefined> {
    const res = await this.#send(this.#client.query('SHOW server_version'));
    const v = res.rows[0]?.server_version;
    return typeof v === 'string' ? `PostgreSQL ${v}` : undefined;
  }

  /**
   * Closes the session, and resolves once the server has ended it: a round trip still running (a
   * statement given up at its timeout or cancel, the backend asked to terminate) is waited for
   * first — the server closes the socket when the backend exits, or answers once the statement
   * ends — then the session is ended politely and the server's close awaited. The pool counts the
   * connection against its size until then. A server that vanished from the network is noticed
   * by TCP keepalive. Behind a pooler this is the client's link: the pooler keeps its backend
   * for this client until the statement's answer arrives, and ends nothing sooner.
   */
  async close(): Promise<void> {
    this.#broken = true;
    const running = this.#running;
    if (running) {
      const stream = this.#client.connection?.stream as { setKeepAlive?: (on: boolean, delayMs: number) => void } | undefined;
      try {
        stream?.setKeepAlive?.(true, ENDING_KEEPALIVE_MS);
      } catch {
        // Not a TCP socket (a Unix socket): the local server's close is seen all the same.
      }
      await running;
    }
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
