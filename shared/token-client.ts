import type { Requester } from './daemon-client.js';
import {
  type CreatedToken,
  CreatedTokenSchema,
  type CreateTokenRequest,
  RevokedTokenSchema,
  type TokenInfo,
  TokenListSchema,
} from './token-schemas.js';

/** `POST /v1/tokens` (CLI only): a new bearer token for MCP over HTTP, returned this once. */
export function createToken(client: Requester, body: CreateTokenRequest): Promise<CreatedToken> {
  return client.request('POST', '/v1/tokens', body, CreatedTokenSchema);
}

/** `GET /v1/tokens` (CLI only): labels, scopes and dates; never a token. */
export async function listTokens(client: Requester): Promise<TokenInfo[]> {
  return (await client.request('GET', '/v1/tokens', undefined, TokenListSchema)).tokens;
}

/** `DELETE /v1/tokens/:label` (CLI only): the token stops working at once. */
export async function revokeToken(client: Requester, label: string): Promise<void> {
  await client.request('DELETE', `/v1/tokens/${encodeURIComponent(label)}`, undefined, RevokedTokenSchema);
}
