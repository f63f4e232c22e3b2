import type { QueryRequest, QueryResult, SessionInfo } from '../../shared/schemas.js';
import type { CallInfo, CallSummary } from './call-tracker.js';

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
