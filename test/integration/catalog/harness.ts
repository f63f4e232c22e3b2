import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { CatalogService } from '../../../daemon/catalog/catalog-service.js';
import { loadDriverFactory } from '../../../daemon/engines/index.js';
import { checkStatement } from '../../../daemon/policy/index.js';
import { DEFAULT_POOL_OPTIONS } from '../../../daemon/pools/pool.js';
import { PoolManager } from '../../../daemon/pools/pool-manager.js';
import { QueryService } from '../../../daemon/queries/query-service.js';
import { ConnectionService } from '../../../daemon/registry/connection-service.js';
import { Registry } from '../../../daemon/registry/registry.js';

/** The daemon's real graph (registry, pools, query service) around a CatalogService, in a temp folder. */
export interface Harness {
  readonly dir: string;
  readonly catalog: CatalogService;
  readonly queries: QueryService;
  readonly connections: ConnectionService;
  /** Registers a connection; `context` declares context parameter names as `hanactl add --context` does. */
  add(name: string, url: string, context?: string[]): Promise<void>;
  close(): Promise<void>;
}

export function createHarness(): Harness {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-catalog-'));
  const registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));
  const pools = new PoolManager({ pool: DEFAULT_POOL_OPTIONS, connectTimeoutMs: 5000, maxPools: 8, loadDriverFactory });
  const connections = new ConnectionService(registry, pools);
  const queries = new QueryService({
    resolve: (n) => connections.resolve(n),
    poolFor: (r) => pools.poolFor(r),
    policy: { check: (_s, { allowWrite }) => (allowWrite ? 'write' : 'read') },
  });
  // Wired as the composition root does: the policy's validator; HANA's explain writes through the query service.
  const catalog = new CatalogService({ queries, validate: (sql, engine) => checkStatement(sql, { dialect: engine, allowWrite: false }) });
  return {
    dir,
    catalog,
    queries,
    connections,
    add: async (name, url, context) => {
      await connections.add({ name, url, ...(context ? { context } : {}) });
    },
    close: async () => {
      await pools.closeAll();
      registry.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const MYSQL_ADMIN_URL = process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** An admin connection that runs several statements per call (fixtures in bulk). */
export function mysqlAdmin(url: string = MYSQL_ADMIN_URL): Promise<mysql.Connection> {
  return mysql.createConnection({ uri: url, multipleStatements: true, connectTimeout: 3000 });
}

/**
 * Whether MariaDB/MySQL answers. In CI an unreachable server fails the suite; elsewhere the
 * tests skip and say what to start (as `serverAvailable` does for PostgreSQL).
 */
export async function mysqlAvailable(url: string = MYSQL_ADMIN_URL): Promise<boolean> {
  try {
    const conn = await mysqlAdmin(url);
    await conn.end();
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`mysql is not reachable at ${url} in CI: ${(err as Error).message}`);
    console.warn(`Skipping MariaDB catalog tests: no server at ${url}. Start MariaDB to run them.`);
    return false;
  }
}

/** A per-run suffix so concurrent runs never share a fixture schema. */
export const RUN_ID = `${process.pid}_${randomBytes(2).toString('hex')}`;

/** `t0001` ... `t2000`: the names of the capping fixture's tables. */
export const BIG_TABLES = Array.from({ length: 2000 }, (_, i) => `t${String(i + 1).padStart(4, '0')}`);
