import type { Agent } from 'node:http';
import { createRequire } from 'node:module';
import type { z } from 'zod';
import { cliCommand } from './cli-command.js';
import { CLIENT_HEADER } from './client-header.js';
import { fromWire, HanactlError } from './errors.js';
import { assertPrivateRunDir, type RunDirPaths } from './private-run-dir.js';
import type { ProjectScope } from './project-schemas.js';
import {
  type AddConnectionRequest,
  type ConnectionInfo,
  ConnectionInfoSchema,
  type ConnectionList,
  ConnectionListSchema,
  type ConnectionTestResult,
  ConnectionTestResultSchema,
  type ContextSqlRequest,
  type ContextSqlResult,
  ContextSqlResultSchema,
  type Health,
  HealthSchema,
  type OpenSessionRequest,
  PoolListSchema,
  type PoolStats,
  type QueryRequest,
  type QueryResult,
  QueryResultSchema,
  type SessionInfo,
  SessionInfoSchema,
  type SessionUpdate,
  type Status,
  StatusSchema,
  type UpdateConnectionRequest,
} from './schemas.js';
import { explainSocketError, UNREACHABLE } from './socket-errors.js';

export interface DaemonClientOptions {
  readonly socketPath: string;
  /** Names this program in the client header (`hanactl-cli`, `hanactl-shim`). */
  readonly clientName: string;
  /** Starts a daemon when none answers; without it, an absent daemon is an error. */
  readonly autoStart?: () => Promise<void>;
  /**
   * In-process transport: requests go to this function (the daemon's own `app.fetch`) instead of
   * the socket. The daemon's MCP over HTTP uses it to run the shim's tools inside the daemon.
   */
  readonly fetch?: (request: Request) => Response | Promise<Response>;
  /**
   * The home, socket folder and socket, checked before every request over the socket
   * (assertPrivateRunDir): a socket another user could have swapped in is never written to.
   * Every program's client passes them; only tests that listen themselves leave them out.
   */
  readonly runDir?: RunDirPaths;
  /** Sent with every request besides the client header (e.g. CONNECTION_SCOPE_HEADER). */
  readonly headers?: Readonly<Record<string, string>>;
  /** How long an idle keep-alive socket stays open (default IDLE_SOCKET_MS). */
  readonly idleSocketMs?: number;
}

/**
 * An idle keep-alive socket is closed by the client well before the daemon would close it
 * (DAEMON_KEEP_ALIVE_MS): a socket both ends close at about the same moment is the classic
 * keep-alive race, where a request written as the server's FIN arrives fails with ECONNRESET.
 * On a loaded machine timers run late, so the margin is minutes, not Node's default second.
 */
export const IDLE_SOCKET_MS = 60_000;
export const DAEMON_KEEP_ALIVE_MS = 300_000;

/** node:http is loaded on first use rather than at import: a process that never asks pays nothing for it. */
let http: typeof import('node:http') | undefined;
function loadHttp(): typeof import('node:http') {
  // A builtin resolves from any base; the bundled shim has no import.meta.url.
  http ??= createRequire((import.meta.url as string | undefined) ?? `${process.cwd()}/`)('node:http') as typeof import('node:http');
  return http;
}

/** `?project=...&session=...` for a scope, or nothing. */
function scopeQuery(scope: ProjectScope | undefined): string {
  const query = new URLSearchParams();
  if (scope?.project) query.set('project', scope.project);
  if (scope?.session) query.set('session', scope.session);
  const text = query.toString();
  return text ? `?${text}` : '';
}

/** An answer's body as the caller's type: an error status rebuilt as HanactlError, a body checked against the schema. */
function settle<T>(method: string, path: string, status: number, text: string, schema: z.ZodType<T> | undefined): T {
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    throw new HanactlError('INTERNAL', `The daemon answered ${status} with a body that is not JSON.`);
  }
  if (status >= 400) throw fromWire(json, status);
  if (!schema) return json as T;
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  throw new HanactlError(
    'INTERNAL',
    `The daemon's answer to ${method} ${path} does not match this client's version; restart the daemon (\`${cliCommand()} daemon stop\`).`,
  );
}

/**
 * The daemon's HTTP API over its Unix socket, for the shim and the CLI alike. Keep-alive
 * connections, bodies checked against the shared schemas, errors rebuilt as HanactlError.
 */
export class DaemonClient {
  readonly #options: DaemonClientOptions;
  #agent: Agent | undefined;
  #starting: Promise<void> | undefined;

  constructor(options: DaemonClientOptions) {
    this.#options = options;
  }

  /** A client like this one that also sends `headers` with every request. */
  withHeaders(headers: Readonly<Record<string, string>>): DaemonClient {
    return new DaemonClient({ ...this.#options, headers: { ...this.#options.headers, ...headers } });
  }

  get socketPath(): string {
    return this.#options.socketPath;
  }

  health(): Promise<Health> {
    return this.request('GET', '/v1/health', undefined, HealthSchema);
  }
  /** Registry connections, plus the project's (`project:<name>`) when a scope names a project. */
  listConnections(scope?: ProjectScope): Promise<ConnectionList> {
    return this.request('GET', `/v1/connections${scopeQuery(scope)}`, undefined, ConnectionListSchema);
  }
  getConnection(name: string, scope?: ProjectScope): Promise<ConnectionInfo> {
    return this.request('GET', `/v1/connections/${encodeURIComponent(name)}${scopeQuery(scope)}`, undefined, ConnectionInfoSchema);
  }
  addConnection(body: AddConnectionRequest): Promise<ConnectionInfo> {
    return this.request('POST', '/v1/connections', body, ConnectionInfoSchema);
  }
  updateConnection(name: string, body: UpdateConnectionRequest): Promise<ConnectionInfo> {
    return this.request('POST', `/v1/connections/${encodeURIComponent(name)}/settings`, body, ConnectionInfoSchema);
  }
  contextSql(name: string, body: ContextSqlRequest): Promise<ContextSqlResult> {
    return this.request('POST', `/v1/connections/${encodeURIComponent(name)}/context-sql`, body, ContextSqlResultSchema);
  }
  removeConnection(name: string): Promise<unknown> {
    return this.request('DELETE', `/v1/connections/${encodeURIComponent(name)}`);
  }
  testConnection(name: string): Promise<ConnectionTestResult> {
    return this.request('POST', `/v1/connections/${encodeURIComponent(name)}/test`, {}, ConnectionTestResultSchema);
  }
  openSession(body: OpenSessionRequest): Promise<SessionInfo> {
    return this.request('POST', '/v1/sessions', body, SessionInfoSchema);
  }
  updateSession(id: string, body: SessionUpdate): Promise<SessionInfo> {
    return this.request('POST', `/v1/sessions/${encodeURIComponent(id)}`, body, SessionInfoSchema);
  }
  closeSession(id: string): Promise<unknown> {
    return this.request('DELETE', `/v1/sessions/${encodeURIComponent(id)}`);
  }
  query(body: QueryRequest, signal?: AbortSignal): Promise<QueryResult> {
    return this.request('POST', '/v1/query', body, QueryResultSchema, signal);
  }
  async pools(): Promise<PoolStats[]> {
    return (await this.request('GET', '/v1/pools', undefined, PoolListSchema)).pools;
  }
  status(): Promise<Status> {
    return this.request('GET', '/v1/status', undefined, StatusSchema);
  }
  shutdown(): Promise<unknown> {
    return this.request('POST', '/v1/shutdown', {});
  }

  /** One API call; starts the daemon first when allowed and none answers. */
  async request<T = unknown>(method: string, path: string, body?: unknown, schema?: z.ZodType<T>, signal?: AbortSignal): Promise<T> {
    try {
      return await this.#send(method, path, body, schema, signal);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (UNREACHABLE.has(code) && this.#options.autoStart) {
        this.#starting ??= this.#options.autoStart().finally(() => {
          this.#starting = undefined;
        });
        await this.#starting;
        return await this.#send(method, path, body, schema, signal).catch((e) => {
          throw this.#translate(e);
        });
      }
      throw this.#translate(err);
    }
  }

  #translate(err: unknown): unknown {
    return explainSocketError(err, this.#options.socketPath);
  }

  async #send<T>(method: string, path: string, body: unknown, schema: z.ZodType<T> | undefined, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (this.#options.fetch) {
      const headers: Record<string, string> = { ...this.#options.headers, [CLIENT_HEADER]: this.#options.clientName };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const request = new Request(`http://hanactl${path}`, {
        method,
        headers,
        ...(payload !== undefined ? { body: payload } : {}),
        ...(signal ? { signal } : {}),
      });
      const response = await this.#options.fetch(request);
      return settle(method, path, response.status, await response.text(), schema);
    }
    if (this.#options.runDir) assertPrivateRunDir(this.#options.runDir);
    const { Agent, request: httpRequest } = loadHttp();
    // `timeout` closes sockets idle in the pool; a request in flight on a socket is never cut by it.
    this.#agent ??= new Agent({ keepAlive: true, maxSockets: 16, timeout: this.#options.idleSocketMs ?? IDLE_SOCKET_MS });
    return new Promise<T>((resolve, reject) => {
      const req = httpRequest(
        {
          socketPath: this.#options.socketPath,
          path,
          method,
          agent: this.#agent,
          headers: {
            ...this.#options.headers,
            [CLIENT_HEADER]: this.#options.clientName,
            ...(payload !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
          ...(signal ? { signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            try {
              resolve(settle(method, path, res.statusCode ?? 500, Buffer.concat(chunks).toString('utf8'), schema));
            } catch (err) {
              reject(err);
            }
          });
        },
      );
      req.on('error', (err) => {
        if ((err as Error).name === 'AbortError') reject(new HanactlError('QUERY_CANCELLED', 'The call was cancelled.'));
        else reject(err);
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /** Closes idle keep-alive sockets so the process can exit. */
  close(): void {
    this.#agent?.destroy();
  }
}

/** What the per-area API helpers (keys, tokens, projects, operator) need of a client. */
export type Requester = Pick<DaemonClient, 'request'>;
