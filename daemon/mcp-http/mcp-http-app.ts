import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cliCommand } from '../../shared/cli-command.js';
import type { Engine } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { boundsRefusal, overBounds, topLevelScalars } from '../../shared/json-bounds.js';
import { ConnectionNameSchema } from '../../shared/schemas.js';
import type { TokenGrant } from '../tokens/token-service.js';
import type { HttpSessions } from './http-sessions.js';
import { type SessionBinding, sameBinding } from './http-sessions.js';
import type { OAuthCaller } from './oauth-verifier.js';
import type { PersonCalls } from './person-calls.js';
import { contextFromClaims, contextFromQuery, parseRawQuery, rawQueryOf } from './query-context.js';
import { type BearerAuthDeps, type BearerVariables, bearerAuth, hostAndOrigin } from './request-guards.js';
import { RPC, rpcError, rpcErrorFor } from './rpc-error.js';

/** The values a static token is bound to, of the names its connection still declares; undefined when none. */
function tokenContext(grant: TokenGrant, declared: readonly string[]): Record<string, string> | undefined {
  if (!grant.context) return undefined;
  return Object.fromEntries(Object.entries(grant.context).filter(([name]) => declared.includes(name)));
}

/** True when a JSON-RPC body (or batch) holds a `tools/call` request. */
function callsTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some((m) => typeof m === 'object' && m !== null && (m as { method?: unknown }).method === 'tools/call');
}

/** What the endpoint needs; the composition root builds it. */
export interface McpHttpAppDeps {
  /** Host and Origin values that name this endpoint. */
  readonly address: { readonly hosts: readonly string[]; readonly origins: readonly string[]; readonly remote?: boolean };
  readonly tokens: { verify(token: string): TokenGrant | undefined };
  /** The identity provider's access tokens are accepted too, and the protected-resource metadata is served. */
  readonly oauth?: BearerAuthDeps['oauth'];
  /** Which connections a signed-in caller may use: none without a grant. */
  readonly grants?: { allows(connection: string, caller: OAuthCaller): boolean };
  /** A registry connection's declared context names and engine; rejects with CONNECTION_NOT_FOUND. */
  describe(connection: string): Promise<{
    readonly name: string;
    readonly context: readonly string[];
    readonly engine: Engine;
    /** For signed-in callers, the token claim each context name's value comes from. */
    readonly contextClaims?: Readonly<Record<string, string>>;
  }>;
  /** Every registry connection with its context names and claims, for `/mcp` (no connection in the URL). */
  listConnections?(): Promise<
    readonly { readonly name: string; readonly context: readonly string[]; readonly contextClaims?: Readonly<Record<string, string>> }[]
  >;
  readonly sessions: HttpSessions;
  /** The calls each signed-in person has running: one more than the limit is refused with 429. */
  readonly personCalls?: PersonCalls;
  onError?(err: unknown, path: string): void;
}

export const MAX_MCP_BODY_BYTES = 4 * 1024 * 1024;

/**
 * MCP over HTTP (Streamable HTTP): `/mcp/<connection>?NAME=value...`. In order, each refusal
 * before any tool runs: Host/Origin (403), bearer token (401), the token's connection scope
 * (403), the connection (404), the query string's context values (400). A request without a
 * session must be an initialize, which opens one; later requests must match its connection,
 * context values and token. Pure: it never listens; tests call `app.request(...)`.
 */
export function createMcpHttpApp(deps: McpHttpAppDeps): Hono<{ Variables: BearerVariables }> {
  const app = new Hono<{ Variables: BearerVariables }>();
  app.onError((err, c) => {
    const known = rpcErrorFor(err);
    if (known) return known;
    deps.onError?.(err, c.req.path);
    return rpcError(500, 'The broker hit an unexpected error; it is logged in the daemon log.');
  });
  app.notFound((c) => rpcError(404, `No such endpoint: ${c.req.path}. MCP over HTTP is served at /mcp/<connection>.`));
  app.use('*', hostAndOrigin(deps.address));
  const oauth = deps.oauth;
  if (oauth) {
    // RFC 9728: at the root, and with the resource's path appended as the MCP clients look for it.
    const metadata = () =>
      new Response(
        JSON.stringify({
          resource: oauth.settings.audience,
          authorization_servers: [oauth.settings.issuer],
          bearer_methods_supported: ['header'],
          resource_name: 'hanactl',
        }),
        { headers: { 'content-type': 'application/json', 'cache-control': 'max-age=300' } },
      );
    app.get('/.well-known/oauth-protected-resource', metadata);
    app.get('/.well-known/oauth-protected-resource/*', metadata);
  }
  app.use('/mcp/*', bearerAuth({ tokens: deps.tokens, ...(oauth ? { oauth } : {}) }));
  app.use(
    '/mcp/*',
    bodyLimit({
      maxSize: MAX_MCP_BODY_BYTES,
      onError: () => rpcError(413, `The request body is larger than ${MAX_MCP_BODY_BYTES} bytes.`),
    }),
  );

  app.all('/mcp/:connection', async (c) => {
    const name = c.req.param('connection');
    const grant = c.get('grant');
    if (grant.connection !== null && grant.connection !== name) {
      return rpcError(403, `The token "${grant.label}" is limited to the connection "${grant.connection}"; it cannot open /mcp/${name}.`);
    }
    const caller = c.get('caller');
    // No grant, no access; the same answer whether or not the connection exists.
    if (caller && !deps.grants?.allows(name, caller)) {
      return rpcError(
        403,
        `You (${caller.subject}) have no grant for the connection "${name}"; a person gives one with \`${cliCommand()} grant ${name} <subject-or-group>\`.`,
      );
    }
    if (!ConnectionNameSchema.safeParse(name).success)
      throw new HanactlError('CONNECTION_NOT_FOUND', `There is no connection named "${name}".`);
    const connection = await deps.describe(name);
    const context = caller
      ? contextFromQuery(rawQueryOf(c.req.url), connection, contextFromClaims(connection, caller))
      : contextFromQuery(rawQueryOf(c.req.url), connection, tokenContext(grant, connection.context), `the token "${grant.label}"`);
    const binding = {
      connection: name,
      context,
      token: grant.label,
      ...(caller ? { person: { subject: caller.subject, issuer: caller.issuer } } : {}),
    };

    return serve(c.req.raw, binding);
  });

  // `/mcp`: a signed-in caller chooses among the connections granted to it; a static token is
  // bound to a connection's URL, so here it gets the answer it always got.
  app.all('/mcp', async (c) => {
    const caller = c.get('caller');
    if (!caller || !deps.grants) return rpcError(404, `No such endpoint: ${c.req.path}. MCP over HTTP is served at /mcp/<connection>.`);
    const pairs = parseRawQuery(rawQueryOf(c.req.url));
    const context: Record<string, string> = {};
    for (const [raw, value] of pairs) {
      const name = raw.trim().toUpperCase();
      if (name in context) throw new HanactlError('CONTEXT_INVALID', `The context parameter ${name} is given more than once.`);
      context[name] = value;
    }
    // A name some granted connection takes from the caller's claims is not the URL's to give; the
    // claims those connections read are part of the session, so a changed claim needs a new one.
    const claims: Record<string, string> = {};
    for (const connection of deps.listConnections ? await deps.listConnections() : []) {
      for (const claim of Object.values(connection.contextClaims ?? {})) claims[claim] = JSON.stringify(caller.claims[claim] ?? null);
      if (!deps.grants.allows(connection.name, caller)) continue;
      const claimed = Object.keys(connection.contextClaims ?? {}).find((n) => n in context && connection.context.includes(n));
      if (claimed) {
        throw new HanactlError(
          'FORBIDDEN',
          `The context parameter ${claimed} of "${connection.name}" comes from your sign-in, not from the URL; remove ${claimed}=... from the endpoint's query string.`,
        );
      }
    }
    const binding = {
      connection: null,
      // A context name has no colon: the claims cannot shadow a URL value.
      context: { ...context, ...Object.fromEntries(Object.entries(claims).map(([k, v]) => [`claim:${k}`, v])) },
      token: c.get('grant').label,
      person: { subject: caller.subject, issuer: caller.issuer },
      shared: { caller, urlContext: pairs },
    };
    return serve(c.req.raw, binding);
  });

  /** One request of an MCP session bound to `binding`: an initialize opens it, later ones must match it. */
  async function serve(request: Request, binding: SessionBinding): Promise<Response> {
    // A POST body is bounded and parsed here, once, before the session's transport or any schema walks it.
    let body: unknown;
    if (request.method === 'POST') {
      const read = await readBody(request);
      if (read instanceof Response) return read;
      body = read.body;
    }
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = deps.sessions.get(sessionId);
      if (!session) return rpcError(404, 'Session not found; start a new one with initialize.', -32001);
      if (session.binding.token !== binding.token) return rpcError(403, 'This MCP session was opened with another token.');
      if (!sameBinding(session.binding, binding)) {
        return rpcError(
          400,
          `This MCP session was opened on /mcp${session.binding.connection !== null ? `/${session.binding.connection}` : ''} with other context values; use the URL it was opened with.`,
        );
      }
      if (binding.person && deps.personCalls?.full(binding.person) && callsTool(body)) {
        const refusal = deps.personCalls.refusal(binding.person);
        return rpcError(429, refusal.message, undefined, { 'retry-after': '5' });
      }
      return deps.sessions.handle(sessionId, request, body);
    }
    if (request.method !== 'POST')
      return rpcError(400, 'Bad Request: Mcp-Session-Id header is required; start a session with an initialize POST.');
    if (!isInitializeRequest(body)) return rpcError(400, 'Bad Request: No valid session ID provided; start a session with initialize.');
    return deps.sessions.start(binding, request, body);
  }
  return app;
}

/**
 * A POST body, parsed once its values and nesting are counted on the bytes (shared/json-bounds.ts).
 * Over the bounds it is answered without parsing: a tool call as an isError result the model can
 * act on, any other request invalid params, each with the request's id; not JSON is a parse error.
 */
async function readBody(request: Request): Promise<{ body: unknown } | Response> {
  const bytes = new Uint8Array(await request.arrayBuffer());
  const over = overBounds(bytes);
  if (over !== undefined) {
    const message = boundsRefusal(over);
    const { id, method } = topLevelScalars(bytes, ['id', 'method']);
    if (typeof id !== 'string' && typeof id !== 'number') return rpcError(400, message, RPC.invalidParams);
    const answer =
      method === 'tools/call'
        ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: message }], isError: true } }
        : { jsonrpc: '2.0', id, error: { code: RPC.invalidParams, message } };
    return new Response(JSON.stringify(answer), { status: 200, headers: { 'content-type': 'application/json' } });
  }
  try {
    return { body: JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')) };
  } catch {
    return rpcError(400, 'Parse error: the body is not JSON.', RPC.parseError);
  }
}
