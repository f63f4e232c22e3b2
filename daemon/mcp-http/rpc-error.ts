import { type ErrorCode, HanactlError, isHanactlError } from '../../shared/errors.js';

/** JSON-RPC error codes this endpoint answers with, besides the SDK transport's own. */
export const RPC = { parseError: -32700, invalidRequest: -32600, invalidParams: -32602, server: -32000 } as const;

/**
 * An HTTP error answer with a JSON-RPC error body, as MCP clients expect from a Streamable
 * HTTP endpoint; the SDK client shows the body's text in the error it raises.
 */
export function rpcError(status: number, message: string, code: number = RPC.server, headers: Record<string, string> = {}): Response {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  return new Response(body, { status, headers: { 'content-type': 'application/json', ...headers } });
}

const RPC_CODES: Partial<Record<ErrorCode, number>> = { CONTEXT_INVALID: RPC.invalidParams, INVALID_REQUEST: RPC.invalidRequest };

/** A HanactlError as an HTTP answer (its status, its sentence); anything else is a 500 the caller logs. */
export function rpcErrorFor(err: unknown): Response | undefined {
  if (!isHanactlError(err)) return undefined;
  return rpcError(err.status, err.message, RPC_CODES[err.code] ?? RPC.server);
}

/** A 403 with a sentence. */
export function forbidden(message: string): HanactlError {
  return new HanactlError('FORBIDDEN', message);
}
