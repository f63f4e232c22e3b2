import type { QueryRequest, QueryResult, SessionInfo } from '../../shared/schemas.js';
import type { CallInfo, CallSummary } from './call-tracker.js';
import { type Caller, type TrackedCallDeps, trackCall } from './tracked-call.js';

/** What the tracker and the audit trail learn from a `POST /v1/query` body: never parameter or context values. */
export function queryCallInfo(body: QueryRequest, session: SessionInfo | undefined): CallInfo {
  return {
    connection: body.connection,
    statement: body.sql,
    paramCount: body.params?.length ?? 0,
    ...(body.tool ? { tool: body.tool } : {}),
    ...(session ? { session: { id: session.id, client: session.client } } : {}),
    // The call's own project folder (it resolves `project:<name>`), else the session's.
    ...((body.project ?? session?.project) ? { project: body.project ?? session?.project } : {}),
  };
}

/** Rows returned and whether the cap cut them, for the audit record. */
export function summarizeRows(result: Pick<QueryResult, 'rowCount' | 'truncated'>): CallSummary {
  return { rows: result.rowCount, truncated: result.truncated };
}

/** One statement call (run_query, a curated tool's) with its bookkeeping; `run` gets the call's signal and id. */
export function trackQuery(
  deps: TrackedCallDeps,
  body: QueryRequest,
  caller: Caller,
  run: (signal: AbortSignal | undefined, queryId?: string) => Promise<QueryResult>,
): Promise<QueryResult> {
  return trackCall<QueryResult>(deps, caller, {
    session: body.session,
    describe: (session) => queryCallInfo(body, session),
    run,
    summarize: summarizeRows,
  });
}
