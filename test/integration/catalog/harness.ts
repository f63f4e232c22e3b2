import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import type { CatalogService } from '../../../daemon/catalog/catalog-service.js';
import { type InProcessDaemon, inProcessDaemon } from '../../helpers/in-process-daemon.js';

/** The daemon's whole graph (createDaemon: registry, pools, the real statement policy), its catalog service in front, in a temp folder. */
export interface Harness {
  readonly dir: string;
  readonly daemon: InProcessDaemon;
  readonly catalog: CatalogService;
  /** Registers a connection; `context` declares context parameter names as `hanactl add --context` does. */
  add(name: string, url: string, context?: string[]): Promise<void>;
  /** Closes the graph (pools, audit trail, registry) and removes the folder. */
  close(): Promise<void>;
}

export async function createHarness(): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-catalog-'));
  const daemon = await inProcessDaemon(dir, { connectTimeoutMs: 5000, maxPools: 8 });
  return {
    dir,
    daemon,
    catalog: daemon.catalog,
    add: async (name, url, context) => {
      await daemon.connections.add({ name, url, ...(context ? { context } : {}) });
    },
    close: async () => {
      await daemon.close();
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
