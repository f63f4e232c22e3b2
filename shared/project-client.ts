import type { Requester } from './daemon-client.js';
import {
  type DetectRequest,
  type DetectResult,
  DetectResultSchema,
  type ImportRequest,
  type TrustChange,
  TrustChangeSchema,
  type TrustedFolder,
  TrustListSchema,
} from './project-schemas.js';
import { type ConnectionInfo, ConnectionInfoSchema } from './schemas.js';

/**
 * The daemon's project and trust API for the shim and the CLI. Trusting, untrusting and
 * importing answer only to the CLI's client header; the shim never calls them.
 */
/** `POST /v1/projects/detect`: the project root, its sources and the connections they yield. */
export function detectProject(client: Requester, body: DetectRequest, signal?: AbortSignal): Promise<DetectResult> {
  return client.request('POST', '/v1/projects/detect', body, DetectResultSchema, signal);
}

/** `POST /v1/projects/import`: copies a project connection into the encrypted registry (CLI only). */
export function importProjectConnection(client: Requester, body: ImportRequest): Promise<ConnectionInfo> {
  return client.request('POST', '/v1/projects/import', body, ConnectionInfoSchema);
}

/** `GET /v1/trust`: the folders a person trusted. */
export async function listTrusted(client: Requester): Promise<TrustedFolder[]> {
  return (await client.request('GET', '/v1/trust', undefined, TrustListSchema)).trusted;
}

/** `POST /v1/trust` (CLI only): trusts a folder, stored by its real path. */
export function trustFolder(client: Requester, path: string): Promise<TrustChange> {
  return client.request('POST', '/v1/trust', { path }, TrustChangeSchema);
}

/** `POST /v1/trust/remove` (CLI only). */
export function untrustFolder(client: Requester, path: string): Promise<TrustChange> {
  return client.request('POST', '/v1/trust/remove', { path }, TrustChangeSchema);
}
