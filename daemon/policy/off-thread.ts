import { Worker } from 'node:worker_threads';
import { checkStatement } from './check-statement.js';
import type { WorkerAnswer, WorkerRequest } from './policy-worker.js';
import type { PolicyOptions, Verdict } from './types.js';

/**
 * Statements at least this long are judged on a worker thread, so the event loop, which answers
 * `health` and every other session, never spends more than a few milliseconds on one check.
 * Chosen by measured cost, not by what is common: the costliest shapes measured (PostgreSQL's
 * parser on thousands of constants `1,1,...`, SQL text nested in query_to_xml, strings with
 * backslashes read three ways) cost up to about 2 ms per KB on an idle core, so a 64 KiB statement
 * held the loop for 150 ms to 1 s. Statements under 1 KB, most of what agents send, stay on the
 * loop (well under a few ms, and no message passing); longer ones pay a thread hop of a fraction
 * of a millisecond.
 */
export const OFF_THREAD_CHARS = 1024;

/**
 * One worker thread, started on the first long statement and kept (unref'd: it never holds the
 * daemon open). Requests queue in its message port, so long statements are judged one at a time
 * while the event loop stays free. A worker that fails is replaced at the next request, and the
 * calls it had are judged on the loop instead: a verdict is always given.
 */
export class OffThreadPolicy {
  readonly #url: URL;
  #worker: Worker | undefined;
  readonly #pending = new Map<number, { sql: string; options: PolicyOptions; resolve: (verdict: Verdict) => void }>();
  #nextId = 0;
  /** Verdicts the worker thread gave (not the loop's fallback). */
  answered = 0;

  constructor(url: URL = new URL('./policy-worker.js', import.meta.url)) {
    this.#url = url;
  }

  check(sql: string, options: PolicyOptions): Promise<Verdict> {
    return new Promise((resolve) => {
      const id = this.#nextId++;
      this.#pending.set(id, { sql, options, resolve });
      try {
        this.#start().postMessage({ id, sql, options } satisfies WorkerRequest);
      } catch {
        this.#fail();
      }
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#url);
    worker.unref();
    worker.on('message', (answer: WorkerAnswer) => {
      const call = this.#pending.get(answer.id);
      if (!call) return;
      this.#pending.delete(answer.id);
      if ('verdict' in answer) this.answered++;
      call.resolve('verdict' in answer ? answer.verdict : checkStatement(call.sql, call.options));
    });
    worker.on('error', () => this.#fail());
    worker.on('exit', () => this.#fail());
    this.#worker = worker;
    return worker;
  }

  /** The worker is gone: every call it held is judged on the loop, and the next request starts a new one. */
  #fail(): void {
    const worker = this.#worker;
    this.#worker = undefined;
    void worker?.terminate().catch(() => {});
    const calls = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of calls) call.resolve(checkStatement(call.sql, call.options));
  }

  /** Ends the worker, if one runs (daemon stop). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.terminate();
  }
}
