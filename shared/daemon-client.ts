import type { Agent } from 'node:http';
import { createRequire } from 'node:module';
import type { z } from 'zod';
import { CLIENT_HEADER } from './client-header.js';
import { HanactlError, fromWire } from './errors.js';
import {
  type AddConnectionRequest,
  type ConnectionInfo,
  ConnectionInfoSchema,
  type ConnectionList,
  ConnectionListSchema,
  type ConnectionTestResult,
  ConnectionTestResultSchema,
  type Health,
  HealthSchema,
  type OpenSessionRequest,
  type PoolStats,
  PoolListSchema,
  type QueryRequest,
  type QueryResult,
  QueryResultSchema,
  type SessionInfo,
  SessionInfoSchema,
  type SessionUpdate,
  type UpdateConnectionRequest,
  type Status,
  StatusSchema,
} from './schemas.js';

export interface DaemonClientOptions {
  readonly socketPath: string;
  /** Names this program in the client header (`hanactl-cli`, `hanactl-shim`). */
  readonly clientName: string;
  /** Starts a daemon when none answers; without it, an absent daemon is an error. */
  readonly autoStart?: () => Promise<void>;
}

/**
 * node:http is loaded on first use rather than at import: the shim's startup snapshot is built
 * before any request, and Node 20 cannot load node:http while building one.
 */
let http: typeof import('node:http') | undefined;
function loadHttp(): typeof import('node:http') {
  // A builtin resolves from any base; the bundled shim has no import.meta.url.
  http ??= createRequire((import.meta.url as string | undefined) ?? `${process.cwd()}/`)('node:http') as typeof import('node:http');
  return http;
}

const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);
const DROPPED = new Set(['ECONNRESET', 'EPIPE']);

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

  get socketPath(): string {
    return this.#options.socketPath;
  }

  health(): Promise<Health> {
    return this.request('GET', '/v1/health', undefined, HealthSchema);
  }
  listConnections(): Promise<ConnectionList> {
    return this.request('GET', '/v1/connections', undefined, ConnectionListSchema);
  }
  getConnection(name: string): Promise<ConnectionInfo> {
    return this.request('GET', `/v1/connections/${encodeURIComponent(name)}`, undefined, ConnectionInfoSchema);
  }
  addConnection(body: AddConnectionRequest): Promise<ConnectionInfo> {
    return this.request('POST', '/v1/connections', body, ConnectionInfoSchema);
  }
  updateConnection(name: string, body: UpdateConnectionRequest): Promise<ConnectionInfo> {
    return this.request('POST', `/v1/connections/${encodeURIComponent(name)}/settings`, body, ConnectionInfoSchema);
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
    const code = (err as NodeJS.ErrnoException).code ?? '';
    if (UNREACHABLE.has(code)) {
      return new HanactlError(
        'DAEMON_UNAVAILABLE',
        `No hanactl daemon is answering on ${this.#options.socketPath}. Start it with \`hanactl daemon start\` (or check \`hanactl daemon status\`).`,
      );
    }
    if (DROPPED.has(code) || (err as Error).message === 'socket hang up') {
      return new HanactlError('DAEMON_RESTARTED', 'The hanactl daemon stopped while handling this call; the call can be retried.');
    }
    return err;
  }

  async #send<T>(method: string, path: string, body: unknown, schema: z.ZodType<T> | undefined, signal?: AbortSignal): Promise<T> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const { Agent, request: httpRequest } = loadHttp();
    this.#agent ??= new Agent({ keepAlive: true, maxSockets: 16 });
    return new Promise<T>((resolve, reject) => {
      const req = httpRequest(
        {
          socketPath: this.#options.socketPath,
          path,
          method,
          agent: this.#agent,
          headers: {
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
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = text ? JSON.parse(text) : undefined;
            } catch {
              reject(new HanactlError('INTERNAL', `The daemon answered ${res.statusCode} with a body that is not JSON.`));
              return;
            }
            const status = res.statusCode ?? 500;
            if (status >= 400) {
              reject(fromWire(json, status));
              return;
            }
            if (!schema) {
              resolve(json as T);
              return;
            }
            const parsed = schema.safeParse(json);
            if (parsed.success) resolve(parsed.data);
            else reject(new HanactlError('INTERNAL', `The daemon's answer to ${method} ${path} does not match this client's version; restart the daemon (\`hanactl daemon stop\`).`));
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
