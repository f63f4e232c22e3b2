import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { withLeanToolList } from '../../shim/lean-tool-list.js';
import type { OAuthCaller } from './oauth-verifier.js';
import { DEFAULT_MAX_SESSIONS_PER_PERSON } from './person-calls.js';
import { rpcError } from './rpc-error.js';

/** Sessions one token may hold at once, unless the options say otherwise. */
export const DEFAULT_MAX_SESSIONS_PER_TOKEN = 32;

/** What an HTTP session is opened for; fixed for its life. */
export interface SessionBinding {
  /** The connection the URL names; null on `/mcp`, where a signed-in caller chooses among its grants. */
  readonly connection: string | null;
  /** The context values the URL's query string gave, checked. */
  readonly context: Readonly<Record<string, string>>;
  /** The label of the token that opened it: another token cannot use the session. */
  readonly token: string;
  /** The signed-in person who opened it (OAuth), named in its calls' audit records. */
  readonly person?: { readonly subject: string; readonly issuer: string };
  /** On `/mcp`: the signed-in caller (claims included) and the URL's context pairs, applied per connection. */
  readonly shared?: { readonly caller: OAuthCaller; readonly urlContext: readonly (readonly [string, string])[] };
}

/** One MCP server for one session, as the factory builds it (the shim's, inside the daemon). */
export interface McpSession {
  readonly server: McpServer;
  /** Mirrors the session in the daemon's session table (`hanactl status`), as the shim's heartbeat does. */
  heartbeat(): Promise<void>;
  /** Removes it from the session table. */
  end(): Promise<void>;
}

export interface HttpSessionsOptions {
  open(binding: SessionBinding): McpSession;
  /** A session with no request for this long is closed (default 30 min). */
  readonly idleTimeoutMillis?: number;
  /** How often a live session is announced to the session table (default 60 s, as the shim). */
  readonly heartbeatMillis?: number;
  /** At most this many sessions at once (default 256); one more is refused with 503. */
  readonly maxSessions?: number;
  /**
   * At most this many sessions at once per token (default 32): one token cannot fill the shared
   * limit and lock out the others. One more is refused with 429 naming the limit.
   */
  readonly maxSessionsPerToken?: number;
  /** At most this many sessions at once per signed-in person (default 32); one more is refused with 429. */
  readonly maxSessionsPerPerson?: number;
  readonly onError?: (err: unknown) => void;
}

interface Entry {
  readonly binding: SessionBinding;
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly mcp: McpSession;
  readonly timer: NodeJS.Timeout;
  lastSeen: number;
}

/** True when two bindings fix the same connection and context values. */
export function sameBinding(a: Omit<SessionBinding, 'token'>, b: Omit<SessionBinding, 'token'>): boolean {
  const keys = Object.keys(a.context);
  return a.connection === b.connection && keys.length === Object.keys(b.context).length && keys.every((k) => a.context[k] === b.context[k]);
}

/**
 * The live MCP over HTTP sessions: one SDK Streamable HTTP transport and one MCP server each,
 * found by the `Mcp-Session-Id` the transport issued. Sessions end on DELETE, when idle past the
 * timeout, or when the daemon stops; each ending removes it from the session table.
 */
export class HttpSessions {
  readonly #entries = new Map<string, Entry>();
  /** Per token, sessions whose initialize is being answered. */
  readonly #starting = new Map<string, number>();
  readonly #options: HttpSessionsOptions;

  constructor(options: HttpSessionsOptions) {
    this.#options = options;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(id: string): { readonly binding: SessionBinding } | undefined {
    return this.#entries.get(id);
  }

  /** Hands a request of an open session to its transport (with its body, when already parsed). */
  handle(id: string, request: Request, parsedBody?: unknown): Promise<Response> {
    const entry = this.#entries.get(id);
    if (!entry) return Promise.resolve(rpcError(404, 'Session not found; start a new one with initialize.'));
    entry.lastSeen = Date.now();
    return entry.transport.handleRequest(request, parsedBody === undefined ? undefined : { parsedBody });
  }

  /** Opens a session with an initialize request (already parsed); the transport answers it. */
  async start(binding: SessionBinding, request: Request, parsedBody: unknown): Promise<Response> {
    const max = this.#options.maxSessions ?? 256;
    if (this.#entries.size >= max) {
      return rpcError(503, `This endpoint already serves ${max} MCP sessions; close one (DELETE) or wait for idle ones to expire.`);
    }
    const perToken = binding.person
      ? (this.#options.maxSessionsPerPerson ?? DEFAULT_MAX_SESSIONS_PER_PERSON)
      : (this.#options.maxSessionsPerToken ?? DEFAULT_MAX_SESSIONS_PER_TOKEN);
    // Sessions still starting count too: a burst of initializes cannot slip past the limit together.
    const starting = this.#starting.get(binding.token) ?? 0;
    const held = starting + [...this.#entries.values()].filter((e) => e.binding.token === binding.token).length;
    if (held >= perToken) {
      if (binding.person) {
        return rpcError(
          429,
          `You (${binding.person.subject}) already hold ${held} MCP sessions, the limit per person (${perToken}); close one (DELETE) or wait for idle ones to expire.`,
          undefined,
          { 'retry-after': '60' },
        );
      }
      return rpcError(
        429,
        `The token "${binding.token}" already holds ${held} MCP sessions, the limit per token (${perToken}); close one (DELETE) or wait for idle ones to expire.`,
        undefined,
        { 'retry-after': '60' },
      );
    }
    this.#starting.set(binding.token, starting + 1);
    try {
      return await this.#open(binding, request, parsedBody);
    } finally {
      const left = (this.#starting.get(binding.token) ?? 1) - 1;
      if (left > 0) this.#starting.set(binding.token, left);
      else this.#starting.delete(binding.token);
    }
  }

  async #open(binding: SessionBinding, request: Request, parsedBody: unknown): Promise<Response> {
    const mcp = this.#options.open(binding);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id: string): void => this.#add(id, binding, transport, mcp),
      onsessionclosed: (id: string): Promise<void> => this.#drop(id),
    });
    transport.onclose = () => {
      if (transport.sessionId) void this.#drop(transport.sessionId);
    };
    await mcp.server.connect(withLeanToolList(transport));
    const response = await transport.handleRequest(request, { parsedBody });
    if (!transport.sessionId) await mcp.server.close().catch(() => {}); // the initialize was refused
    return response;
  }

  /** Ends every session (the daemon stops). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.mcp.server.close().catch(() => {})));
    await Promise.all([...this.#entries.keys()].map((id) => this.#drop(id)));
  }

  #add(id: string, binding: SessionBinding, transport: WebStandardStreamableHTTPServerTransport, mcp: McpSession): void {
    const idle = this.#options.idleTimeoutMillis ?? 30 * 60_000;
    const timer = setInterval(() => {
      if (Date.now() - entry.lastSeen > idle) void mcp.server.close().catch(() => {});
      else mcp.heartbeat().catch((err) => this.#options.onError?.(err));
    }, this.#options.heartbeatMillis ?? 60_000);
    timer.unref();
    const entry: Entry = { binding, transport, mcp, timer, lastSeen: Date.now() };
    this.#entries.set(id, entry);
  }

  async #drop(id: string): Promise<void> {
    const entry = this.#entries.get(id);
    if (!entry) return;
    this.#entries.delete(id);
    clearInterval(entry.timer);
    await entry.mcp.end().catch((err) => this.#options.onError?.(err));
  }
}
