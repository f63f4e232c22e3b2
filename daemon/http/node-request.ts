import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
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

/** One request header (lower-case name). */
export function requestHeader(c: Context, name: string): string | undefined {
  const node = nodeBindings(c);
  if (!node) return c.req.header(name);
  const value = node.incoming.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The declared body length, when the client declared one. */
function declaredLength(c: Context): number | undefined {
  const value = requestHeader(c, 'content-length');
  if (value === undefined || requestHeader(c, 'transfer-encoding') !== undefined) return undefined;
  const n = Number(value);
  return Number.isFinite(n) ? n : undefined;
}

function bodyTooLarge(): HanactlError {
  return new HanactlError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
}

const limitWebBody = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw bodyTooLarge();
  },
});

/**
 * The body limit, MAX_BODY_BYTES: on the socket a declared length is checked here, before the
 * body is sent, and an undeclared one while `readBodyText` reads it; in-process requests go
 * through hono's own limit.
 */
export const limitBody: MiddlewareHandler = async (c, next) => {
  if (!nodeBindings(c)) return limitWebBody(c, next);
  const declared = declaredLength(c);
  if (declared !== undefined && declared > MAX_BODY_BYTES) throw bodyTooLarge();
  await next();
};

/** The client closed its connection before its request was complete: nobody is left to answer (HTTP 499). */
export function clientWentAway(): HanactlError {
  return new HanactlError('QUERY_CANCELLED', 'The client closed its connection before the request was complete.', { rule: 'client-gone' });
}

/** The body as text, behind `limitBody`: a chunked body is refused as soon as it passes the limit. */
export async function readBodyText(c: Context): Promise<string> {
  const node = nodeBindings(c);
  if (!node) return c.req.text();
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of node.incoming as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) throw bodyTooLarge();
      chunks.push(chunk);
    }
  } catch (err) {
    // A client that closes its connection mid-body ("aborted", ECONNRESET) is gone, not a fault of the daemon's.
    if (node.incoming.destroyed && !(err instanceof HanactlError)) throw clientWentAway();
    throw err;
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
