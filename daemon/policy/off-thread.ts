import { Worker } from 'node:worker_threads';
import { HanactlError } from '../../shared/errors.js';
import { checkOwner } from './check-owner.js';
import { checkStatement } from './check-statement.js';
import { objection } from './objections.js';
import type { WorkerAnswer, WorkerRequest } from './policy-worker.js';
import type { PolicyOptions, Verdict } from './types.js';

/**
 * Statements at least this long are judged on a worker thread, so the event loop, which answers
 * `health` and every other session, never spends more than a few milliseconds on one check.
 * Chosen by measured cost, not by what is common: the costliest shapes measured (PostgreSQL's
 * parser on thousands of constants `1,1,...`, SQL text nested in query_to_xml, strings with
 * backslashes read three ways) cost up to about 1 ms per KB, and any statement up to 50 ms (the
 * check's budget, LIMITS in check-statement.ts), too long for the loop. Statements under 1 KB, most of what agents send, stay on the
 * loop (well under a few ms, and no message passing); longer ones pay a thread hop of a fraction
 * of a millisecond.
 */
export const OFF_THREAD_CHARS = 1024;

/** How the worker threads are shared; the defaults are the daemon's. */
export interface OffThreadSettings {
  /** Worker threads at most (default 2): one owner's check in progress never holds every worker. */
  readonly workers?: number;
  /** A check that runs longer on its worker is abandoned and the statement refused (default 3000 ms). */
  readonly deadlineMs?: number;
  /** Statements one owner may have waiting for a worker (default 4); one more is refused, retryable. */
  readonly maxWaiting?: number;
}

export const DEFAULT_CHECK_WORKERS = 2;
/**
 * Wall-clock time (Node 20 cannot measure one thread's CPU): the costliest check of a statement
 * under 1 MB takes under 50 ms of CPU (scripts/policy/validation-cost.mjs), a fresh worker's first
 * checks run before its WebAssembly is optimised, and on a busy machine a thread gets a fraction
 * of a core, so the limit leaves room for that while still freeing a worker within seconds.
 */
export const CHECK_DEADLINE_MS = 3000;
export const MAX_WAITING_CHECKS = 4;

interface Call {
  readonly id: number;
  readonly owner: string;
  readonly sql: string;
  readonly options: PolicyOptions;
  readonly resolve: (verdict: Verdict) => void;
}

/** One owner's turn: its waiting calls, those on a worker now, and when it was last given a worker. */
interface Line {
  readonly waiting: Call[];
  running: number;
  served: number;
}

/** One worker thread and the call it judges (one at a time: the turns are taken here, not in its port). */
interface Slot {
  readonly worker: Worker;
  call: Call | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** The refusal of a statement whose check ran past the deadline: it never runs. */
function tooLong(deadlineMs: number): Verdict {
  return objection(
    'check-too-long',
    `Refused: checking this statement took longer than ${deadlineMs} ms, the limit per statement, so it was not run.`,
    'Send a shorter or simpler statement (fewer constants, less SQL nested inside strings), or split it into several.',
  );
}

/**
 * Long statements are judged on a few worker threads (started on demand, unref'd: they never
 * hold the daemon open), fairly between owners (check-owner.ts: one MCP session each):
 *
 * - each owner has its own queue, and a free worker takes the next statement of the next owner in
 *   turn, so one session's many statements delay another session's by at most one check per owner;
 * - an owner may have at most `maxWaiting` statements waiting; one more is refused (TOO_MANY_CALLS);
 * - a check that runs past `deadlineMs` on its worker is abandoned: the worker is terminated (and
 *   replaced at the next statement) and the statement refused (rule `check-too-long`), so no
 *   single input holds a worker.
 *
 * A worker that fails otherwise is replaced too, and the call it had is judged on the loop
 * instead: a verdict is always given.
 */
export class OffThreadPolicy {
  readonly #url: URL;
  readonly #workers: number;
  readonly #deadlineMs: number;
  readonly #maxWaiting: number;
  readonly #slots = new Set<Slot>();
  /** Each owner with a call waiting or running. */
  readonly #lines = new Map<string, Line>();
  #nextId = 0;
  #turns = 0;
  /** Verdicts the worker threads gave (not the loop's fallback, nor a deadline's refusal). */
  answered = 0;

  constructor(url: URL = new URL('./policy-worker.js', import.meta.url), settings: OffThreadSettings = {}) {
    this.#url = url;
    this.#workers = Math.max(1, settings.workers ?? DEFAULT_CHECK_WORKERS);
    this.#deadlineMs = settings.deadlineMs ?? CHECK_DEADLINE_MS;
    this.#maxWaiting = Math.max(1, settings.maxWaiting ?? MAX_WAITING_CHECKS);
  }

  check(sql: string, options: PolicyOptions): Promise<Verdict> {
    const owner = checkOwner();
    const line = this.#lines.get(owner) ?? { waiting: [], running: 0, served: 0 };
    if (line.waiting.length >= this.#maxWaiting)
      return Promise.reject(
        new HanactlError(
          'TOO_MANY_CALLS',
          `This session already has ${this.#maxWaiting} long statements waiting for their check, the limit per session; wait for an answer, then retry.`,
        ),
      );
    return new Promise((resolve) => {
      line.waiting.push({ id: this.#nextId++, owner, sql, options, resolve });
      this.#lines.set(owner, line);
      this.#pump();
    });
  }

  /**
   * Gives free workers the next calls: the owner with the fewest calls on a worker goes first,
   * then the one served longest ago, so owners take turns however many calls each has waiting.
   */
  #pump(): void {
    for (;;) {
      let next: Line | undefined;
      for (const line of this.#lines.values())
        if (
          line.waiting.length > 0 &&
          (!next || line.running < next.running || (line.running === next.running && line.served < next.served))
        )
          next = line;
      if (!next) return;
      const slot = this.#freeSlot();
      if (!slot) return;
      next.running++;
      next.served = ++this.#turns;
      this.#send(slot, next.waiting.shift() as Call);
    }
  }

  /** A call left its worker (answered, abandoned or failed): its owner's line ends when nothing is left in it. */
  #done(call: Call): void {
    const line = this.#lines.get(call.owner);
    if (!line) return;
    line.running--;
    if (line.running <= 0 && line.waiting.length === 0) this.#lines.delete(call.owner);
  }

  #freeSlot(): Slot | undefined {
    for (const slot of this.#slots) if (!slot.call) return slot;
    return this.#slots.size < this.#workers ? this.#start() : undefined;
  }

  #send(slot: Slot, call: Call): void {
    slot.call = call;
    try {
      slot.worker.postMessage({ id: call.id, sql: call.sql, options: call.options } satisfies WorkerRequest);
    } catch {
      this.#fail(slot);
    }
  }

  #start(): Slot {
    const worker = new Worker(this.#url);
    worker.unref();
    const slot: Slot = { worker, call: undefined, timer: undefined };
    worker.on('message', (answer: WorkerAnswer) => {
      const call = slot.call;
      if (!call || answer.id !== call.id) return;
      if ('started' in answer) {
        // The deadline counts from the check's start: a worker still loading the parser is not late.
        slot.timer = setTimeout(() => this.#abandon(slot), this.#deadlineMs);
        slot.timer.unref();
        return;
      }
      clearTimeout(slot.timer);
      slot.call = undefined;
      slot.timer = undefined;
      if ('verdict' in answer) this.answered++;
      this.#done(call);
      call.resolve('verdict' in answer ? answer.verdict : checkStatement(call.sql, call.options, true));
      this.#pump();
    });
    worker.on('error', () => this.#fail(slot));
    worker.on('exit', () => this.#fail(slot));
    this.#slots.add(slot);
    return slot;
  }

  /** The check ran past the deadline: its worker is ended, the statement refused. */
  #abandon(slot: Slot): void {
    const call = this.#drop(slot);
    if (call) {
      this.#done(call);
      call.resolve(tooLong(this.#deadlineMs));
    }
    this.#pump();
  }

  /** The worker is gone: the call it held is judged on the loop, and the next call starts a new one. */
  #fail(slot: Slot): void {
    if (!this.#slots.has(slot)) return;
    const call = this.#drop(slot);
    if (call) {
      this.#done(call);
      call.resolve(checkStatement(call.sql, call.options, true));
    }
    this.#pump();
  }

  #drop(slot: Slot): Call | undefined {
    this.#slots.delete(slot);
    clearTimeout(slot.timer);
    const { call } = slot;
    slot.call = undefined;
    void slot.worker.terminate().catch(() => {});
    return call;
  }

  /** Ends the workers (daemon stop). */
  async close(): Promise<void> {
    const slots = [...this.#slots];
    this.#slots.clear();
    for (const slot of slots) clearTimeout(slot.timer);
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }
}
