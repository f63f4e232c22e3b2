import { parentPort } from 'node:worker_threads';
import { checkStatement } from './check-statement.js';
import type { PolicyOptions, Verdict } from './types.js';

/** One statement to judge, and the answer: the verdict, or why the check itself failed. */
export interface WorkerRequest {
  readonly id: number;
  readonly sql: string;
  readonly options: PolicyOptions;
}
export type WorkerAnswer = { readonly id: number; readonly verdict: Verdict } | { readonly id: number; readonly error: string };

// The statement check on a thread of its own (see OffThreadPolicy): same code, same verdicts.
parentPort?.on('message', (request: WorkerRequest) => {
  let answer: WorkerAnswer;
  try {
    answer = { id: request.id, verdict: checkStatement(request.sql, request.options) };
  } catch (err) {
    answer = { id: request.id, error: err instanceof Error ? err.message : String(err) };
  }
  parentPort?.postMessage(answer);
});
