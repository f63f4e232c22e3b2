import type { Requester } from './daemon-client.js';
import {
  type ApprovalResult,
  ApprovalResultSchema,
  type AuditList,
  AuditListSchema,
  type AuditQuery,
  type CancelResult,
  CancelResultSchema,
  type RunningQueryList,
  RunningQueryListSchema,
  type SessionList,
  SessionListSchema,
} from './schemas.js';

/**
 * The operator's side of the daemon API, for the CLI: the audit trail, the sessions, the
 * statements running now and cancelling one. Answers are checked against the shared schemas.
 */

/** `GET /v1/audit`: see AuditQuerySchema for the filters. */
export function auditRecords(client: Requester, query: AuditQuery = {}): Promise<AuditList> {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) search.set(key, String(value));
  const qs = search.toString();
  return client.request('GET', `/v1/audit${qs ? `?${qs}` : ''}`, undefined, AuditListSchema);
}

/** `GET /v1/sessions`: the shims talking to the daemon. */
export function listSessions(client: Requester): Promise<SessionList> {
  return client.request('GET', '/v1/sessions', undefined, SessionListSchema);
}

/** `GET /v1/queries`: the statements running now. */
export function runningQueries(client: Requester): Promise<RunningQueryList> {
  return client.request('GET', '/v1/queries', undefined, RunningQueryListSchema);
}

/** `POST /v1/queries/:id/cancel`: cancels a running statement on the database server. */
export function cancelQuery(client: Requester, id: string): Promise<CancelResult> {
  return client.request('POST', `/v1/queries/${encodeURIComponent(id)}/cancel`, {}, CancelResultSchema);
}

/** `POST /v1/queries/:id/approve|deny`: a person's decision on a write waiting for approval. */
export function decideWrite(
  client: Requester,
  id: string,
  approve: boolean,
  body: { user?: string; reason?: string },
): Promise<ApprovalResult> {
  return client.request('POST', `/v1/queries/${encodeURIComponent(id)}/${approve ? 'approve' : 'deny'}`, body, ApprovalResultSchema);
}
