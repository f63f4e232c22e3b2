/**
 * The daemon's object graph in one process, for tests that drive the daemon API with
 * `app.request(...)` and no socket: the encrypted registry in a folder the test owns, the pool
 * manager and connection service over it, query services on those pools, and `createApp` with a
 * fixed health answer. Also the two ways these tests send a request.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { type AppDeps, createApp } from '../../daemon/http/app.js';
import { DEFAULT_POOL_OPTIONS } from '../../daemon/pools/pool.js';
import { PoolManager } from '../../daemon/pools/pool-manager.js';
import { QueryService, type QueryServiceDeps, type StatementPolicy } from '../../daemon/queries/query-service.js';
import { ConnectionService } from '../../daemon/registry/connection-service.js';
import { Registry } from '../../daemon/registry/registry.js';
import { SessionTable } from '../../daemon/sessions/session-table.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../shared/client-header.js';
import type { Health } from '../../shared/schemas.js';

/** The health answer of a test app whose home is `home`. */
export const testHealth =
  (home: string): (() => Health) =>
  () => ({
    name: 'hanactl',
    version: 't',
    pid: 1,
    uptimeMs: 0,
    keySource: 'env',
    socket: 's',
    home,
    node: process.version,
  });

export interface InProcessDaemon {
  readonly registry: Registry;
  readonly pools: PoolManager;
  readonly connections: ConnectionService;
  /** A query service on these pools under `policy`; names resolve in the registry unless `resolve` is given. */
  queryService(policy: StatementPolicy, resolve?: QueryServiceDeps['resolve']): QueryService;
  /**
   * The daemon API over this graph: the test health answer, these connections and pools, a fresh
   * session table and a shutdown that does nothing, each replaced by what `deps` names.
   */
  app(deps: Pick<AppDeps, 'queries'> & Partial<AppDeps>): Hono;
  /** Closes the pools, then the registry; the folder stays the test's to remove. */
  close(): Promise<void>;
}

/** Opens a registry (with a random key) at `<dir>/registry.db` and builds the graph around it. */
export function inProcessDaemon(dir: string, options: { connectTimeoutMs: number; maxPools: number }): InProcessDaemon {
  const registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));
  const pools = new PoolManager({
    pool: DEFAULT_POOL_OPTIONS,
    connectTimeoutMs: options.connectTimeoutMs,
    maxPools: options.maxPools,
    loadDriverFactory,
  });
  const connections = new ConnectionService(registry, pools);
  return {
    registry,
    pools,
    connections,
    queryService: (policy, resolve = (n) => connections.resolve(n)) =>
      new QueryService({ resolve, poolFor: (r) => pools.poolFor(r), policy }),
    app: (deps) => createApp({ health: testHealth(dir), connections, sessions: new SessionTable(), pools, shutdown: () => {}, ...deps }),
    close: async () => {
      await pools.closeAll();
      registry.close();
    },
  };
}

/** One request as sent, `body` as is; from the command line unless `headers` say otherwise (`{}`: no client header). */
export const request = (
  app: Hono,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = { [CLIENT_HEADER]: CLI_CLIENT_NAME },
): Response | Promise<Response> =>
  app.request(path, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });

/** A JSON request from `client` (the command line by default): the status and the parsed answer, as `T`. */
export async function requestJson<T = Record<string, unknown>>(
  app: Hono,
  method: string,
  path: string,
  body?: unknown,
  client: string = CLI_CLIENT_NAME,
): Promise<{ status: number; body: T }> {
  const res = await request(app, method, path, body !== undefined ? JSON.stringify(body) : undefined, { [CLIENT_HEADER]: client });
  return { status: res.status, body: (await res.json()) as T };
}
