import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { HanactlError } from '../../shared/errors.js';

/** The largest request body the daemon reads. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;

/**
 * The Node request behind a hono context, when the daemon serves its socket through
 * @hono/node-server. Reading headers, the body and the client's going away from it directly
 * keeps the hot path from building a Web `Request` (a stream adapter, a Headers object and an
 * AbortController per call, which the profile shows as the largest part of the daemon's own
 * per-call cost). In-process callers (`app.request`, MCP over HTTP) have none: they use the
 * Web request as before.
 */
interface NodeBindings {
  readonly incoming: IncomingMessage;
  readonly outgoing: ServerResponse;
}

function nodeBindings(c: Context): NodeBindings | undefined {
  const env = c.env as Partial<NodeBindings> | undefined;
  return env?.incoming && env.outgoing ? (env as NodeBindings) : undefined;
}

/** Whether the request came over the socket (and its Node request is at hand). */
export function isNodeRequest(c: Context): boolean {
  return nodeBindings(c) !== undefined;
}

/** One request header (lower-case name). */
export function requestHeader(c: Context, name: string): string | undefined {
  const node = nodeBindings(c);
  if (!node) return c.req.header(name);
  const value = node.incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The declared body length, when the client declared one. */
export function declaredLength(c: Context): number | undefined {
  const value = requestHeader(c, 'content-length');
  if (value === undefined || requestHeader(c, 'transfer-encoding') !== undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function tooLarge(maxBytes: number): HanactlError {
  return new HanactlError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes.`);
}

/** The body as text, at most `maxBytes`; a larger body is refused as soon as it is seen to be. */
export async function readBodyText(c: Context, maxBytes: number): Promise<string> {
  const node = nodeBindings(c);
  if (!node) return c.req.text();
  const declared = declaredLength(c);
  if (declared !== undefined && declared > maxBytes) throw tooLarge(maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of node.incoming as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes);
    chunks.push(chunk);
  }
  return (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
}

/** Aborts when the client goes away before the answer is sent (as @hono/node-server's own signal does). */
export function clientGone(c: Context): AbortSignal {
  const node = nodeBindings(c);
  if (!node) return c.req.raw.signal;
  const controller = new AbortController();
  const { incoming, outgoing } = node;
  outgoing.once('close', () => {
    if (incoming.errored) controller.abort(String(incoming.errored));
    else if (!outgoing.writableFinished) controller.abort('Client connection prematurely closed.');
  });
  return controller.signal;
}
