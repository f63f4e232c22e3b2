import type { Broker } from '../../shim/broker.js';
import { gatedBroker } from '../mcp/limited-broker.js';
import { scopedBroker } from '../mcp/scoped-broker.js';
import { defaultMaxCallsPerSession, sessionGate } from '../mcp/session-calls.js';
import { DEFAULT_POOL_OPTIONS } from '../pools/pool.js';
import type { TokenGrant } from '../tokens/token-service.js';
import { grantedBroker } from './granted-broker.js';
import { HttpSessions, type McpSession, type SessionBinding } from './http-sessions.js';
import { listenMcpHttp } from './listen.js';
import type { HttpListenAddress } from './listen-address.js';
import { createMcpHttpApp } from './mcp-http-app.js';
import { type OAuthCaller, type OAuthSettings, OAuthVerifier } from './oauth-verifier.js';
import { limitedBroker, PersonCalls } from './person-calls.js';

/** The client header an MCP over HTTP agent's requests to the daemon API carry: an agent's, never the CLI's. */
export const HTTP_CLIENT_NAME = 'hanactl-http';

export interface McpHttpOptions {
  readonly address: HttpListenAddress;
  readonly tokens: { verify(token: string): TokenGrant | undefined };
  /** Accept the identity provider's access tokens too (`--oauth-issuer`, `--oauth-audience`). */
  readonly oauth?: OAuthSettings;
  /** Which connections signed-in callers may use (`hanactl grant`). */
  readonly grants?: { allows(connection: string, caller: OAuthCaller): boolean };
  /** Serve HTTPS with this certificate and key (PEM); required beyond loopback. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** The daemon's services as the tools use them (daemon/mcp/service-broker.ts). */
  readonly broker: Broker;
  /** The same services for a signed-in person's session, each call audited under their name. */
  readonly brokerFor?: (person: { readonly subject: string; readonly issuer: string }) => Broker;
  /** Builds one session's MCP server: the shim's `createShimServer`, the same tool definitions. */
  readonly createServer: (
    broker: Broker,
    binding: SessionBinding,
  ) => Pick<McpSession, 'server'> & {
    readonly state: { announce(): Promise<void>; sessionId(): Promise<string | undefined> };
  };
  readonly onError?: (err: unknown, path: string) => void;
  readonly sessions?: {
    readonly idleTimeoutMillis?: number;
    readonly maxSessions?: number;
    readonly maxSessionsPerToken?: number;
    readonly maxSessionsPerPerson?: number;
  };
  /** Tool calls one signed-in person may have running at once (default 8). */
  readonly maxCallsPerPerson?: number;
  /** Database calls one MCP session may have running at once (default half the pool). */
  readonly maxCallsPerSession?: number;
}

export interface RunningMcpHttp {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  readonly sessions: HttpSessions;
  close(): Promise<void>;
}

/**
 * MCP over HTTP from the daemon itself: the shim's server, built per session inside the
 * daemon on its services, behind the endpoint's checks, on a loopback listener.
 */
export async function startMcpHttp(options: McpHttpOptions): Promise<RunningMcpHttp> {
  const { broker } = options;
  const personCalls = new PersonCalls(options.maxCallsPerPerson);
  const maxCallsPerSession = options.maxCallsPerSession ?? defaultMaxCallsPerSession(DEFAULT_POOL_OPTIONS.max);
  let opened = 0;
  const sessions = new HttpSessions({
    ...options.sessions,
    open: (binding) => {
      // The session's tools see and use its URL's connection only: the broker answers them
      // about no other (a token limited to one connection learns no other name).
      const person = binding.person ? limitedBroker(options.brokerFor?.(binding.person) ?? broker, binding.person, personCalls) : broker;
      // Each session's calls: at most maxCallsPerSession at once, their checks queued as this session's.
      const base = gatedBroker(person, sessionGate(maxCallsPerSession, `http:${++opened}`));
      const scoped =
        binding.connection !== null
          ? scopedBroker(base, binding.connection)
          : binding.shared && options.grants
            ? grantedBroker(base, binding.shared.caller, options.grants, binding.shared.urlContext)
            : scopedBroker(base, '');
      const { server, state } = options.createServer(scoped, binding);
      // Only a client that finished the handshake is a session in `hanactl status` (the shim
      // announces itself on `initialized` too); a bare initialize, as a probe sends, is not.
      let initialized = false;
      const announceOnInitialized = server.server.oninitialized;
      server.server.oninitialized = () => {
        initialized = true;
        announceOnInitialized?.();
      };
      return {
        server,
        heartbeat: () => (initialized ? state.announce() : Promise.resolve()),
        end: async () => {
          const id = initialized ? await state.sessionId() : undefined;
          if (id) await scoped.closeSession(id).catch(() => {});
        },
      };
    },
    onError: (err) => options.onError?.(err, 'mcp-session'),
  });
  const app = createMcpHttpApp({
    address: options.address,
    tokens: options.tokens,
    ...(options.oauth ? { oauth: new OAuthVerifier(options.oauth) } : {}),
    ...(options.grants ? { grants: options.grants } : {}),
    describe: (name) => broker.getConnection(name),
    listConnections: async () => (await broker.listConnections({})).connections,
    sessions,
    personCalls,
    ...(options.onError ? { onError: options.onError } : {}),
  });
  const listener = await listenMcpHttp(app.fetch, options.address, options.tls);
  let closing: Promise<void> | undefined;
  return {
    url: options.address.url,
    sessions,
    close: () =>
      (closing ??= (async () => {
        listener.stopAccepting();
        await sessions.closeAll();
        listener.drop();
      })()),
  };
}
