import { parentPort } from 'node:worker_threads';
import { checkStatement } from './check-statement.js';
import { parserReady } from './pg-wasm.js';
import type { PolicyOptions, Verdict } from './types.js';

/** One statement to judge, and the answers: that its check started, then the verdict or why the check itself failed. */
export interface WorkerRequest {
  readonly id: number;
  readonly sql: string;
  readonly options: PolicyOptions;
}
export type WorkerAnswer =
  | { readonly id: number; readonly started: true }
  | { readonly id: number; readonly verdict: Verdict }
  | { readonly id: number; readonly error: string };

// The statement check on a thread of its own (see OffThreadPolicy): same code, same verdicts.
// `started` first, so the check's deadline counts from here, not from the thread's start.
parentPort?.on('message', async (request: WorkerRequest) => {
  // After a statement too complex for PostgreSQL's parser, the next check waits for its fresh copy.
  await parserReady();
  parentPort?.postMessage({ id: request.id, started: true } satisfies WorkerAnswer);
  let answer: WorkerAnswer;
  try {
    answer = { id: request.id, verdict: checkStatement(request.sql, request.options, true) };
  } catch (err) {
    answer = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(answer);
});
