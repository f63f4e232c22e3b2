import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DriverConnection, ExecuteOptions } from '../../../../daemon/engines/driver.js';
import { createSqliteDriver } from '../../../../daemon/engines/sqlite/index.js';
import { asCheckOwner } from '../../../../daemon/policy/check-owner.js';
import { DEFAULT_POOL_OPTIONS, type Pool, type PoolOptions } from '../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';

const require = createRequire(import.meta.url);

export const CONNECT_TIMEOUT_MS = 15_000;

/** The read options every test statement runs with. */
export const READ: ExecuteOptions = { maxRows: 10, timeoutMs: 5_000, readOnly: true };

/** Pool options for tests: the defaults with the given overrides. */
export function poolOptions(overrides: Partial<PoolOptions>): PoolOptions {
  return { ...DEFAULT_POOL_OPTIONS, ...overrides };
}

export interface SqliteFixture {
  readonly dir: string;
  /** A fresh SQLite file in its own temp folder. */
  readonly file: string;
  /** Opens a real connection through the SQLite driver, counting it. */
  readonly open: () => Promise<DriverConnection>;
  /** Every connection `open` returned, in order. */
  readonly opened: DriverConnection[];
  /** Connections opened and not yet closed, right now. */
  openNow(): number;
  /** The highest `openNow()` ever reached. */
  peak(): number;
  /** True once `close()` was called on the connection (by the pool or anyone else). */
  wasClosed(connection: DriverConnection): boolean;
  cleanup(): void;
}

/** A SQLite file in a fresh temp folder and a counting `open` for a Pool. */
export function sqliteFixture(prefix = 'hanactl-pool-'): SqliteFixture {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const file = join(dir, 'pool.db');
  const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => { exec(sql: string): void; close(): void };
  const seed = new Database(file);
  seed.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);');
  seed.close();
  // Generous: each SQLite connection is a worker process, slow to start on a busy machine.
  const driver = createSqliteDriver(parseConnectionUrl(`sqlite:${file}`).target, {}, { connectTimeoutMs: CONNECT_TIMEOUT_MS });
  const opened: DriverConnection[] = [];
  const closed = new Set<DriverConnection>();
  let live = 0;
  let peak = 0;
  const open = async (): Promise<DriverConnection> => {
    const connection = await driver.connect();
    opened.push(connection);
    live++;
    peak = Math.max(peak, live);
    const close = connection.close.bind(connection);
    connection.close = async () => {
      if (!closed.has(connection)) {
        closed.add(connection);
        live--;
      }
      await close();
    };
    return connection;
  };
  return {
    dir,
    file,
    open,
    opened,
    openNow: () => live,
    peak: () => peak,
    wasClosed: (connection) => closed.has(connection),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A call of `session` that holds its connection until `finish()`; `holding` settles once it holds one. */
export function hold(pool: Pool, session: string) {
  let finish!: () => void;
  let started!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const holding = new Promise<void>((r) => {
    started = r;
  });
  const done = asCheckOwner(session, () =>
    pool.use(async () => {
      started();
      await finished;
    }),
  );
  done.catch(() => {});
  return { holding, finish, done };
}
