import type { Requester } from './daemon-client.js';
import {
  type ExportDocument,
  ExportDocumentSchema,
  type ExportKeyRequest,
  type RotateKeyRequest,
  type RotateKeyResult,
  RotateKeyResultSchema,
} from './key-schemas.js';

/** `POST /v1/keys/rotate` (CLI only): re-encrypts the registry under a new key. */
export function rotateKey(client: Requester, body: RotateKeyRequest): Promise<RotateKeyResult> {
  return client.request('POST', '/v1/keys/rotate', body, RotateKeyResultSchema);
}

/** `POST /v1/keys/export` (CLI only): the registry and its key wrapped by a passphrase. */
export function exportRegistry(client: Requester, body: ExportKeyRequest): Promise<ExportDocument> {
  return client.request('POST', '/v1/keys/export', body, ExportDocumentSchema);
}
