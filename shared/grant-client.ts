import type { Requester } from './daemon-client.js';
import { type GrantChange, GrantChangeSchema, type GrantInfo, GrantListSchema, type GrantRequest } from './grant-schemas.js';

/** `POST /v1/grants` (CLI only): signed-in callers matching the principal may use the connection. */
export function addGrant(client: Requester, body: GrantRequest): Promise<GrantChange> {
  return client.request('POST', '/v1/grants', body, GrantChangeSchema);
}

/** `DELETE /v1/grants` (CLI only): takes effect on the next request. */
export function removeGrant(client: Requester, body: GrantRequest): Promise<GrantChange> {
  return client.request('DELETE', '/v1/grants', body, GrantChangeSchema);
}

/** `GET /v1/grants` (CLI only). */
export async function listGrants(client: Requester): Promise<GrantInfo[]> {
  return (await client.request('GET', '/v1/grants', undefined, GrantListSchema)).grants;
}
