import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { createSqliteDriver, type SqliteConnection } from '../../../../../daemon/engines/sqlite/index.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';

const require = createRequire(import.meta.url);

/** A better-sqlite3 handle, for seeding and checking files outside the driver. */
export interface SeedDb {
  exec(sql: string): void;
  prepare(sql: string): { get(...params: unknown[]): unknown; run(...params: unknown[]): unknown };
  close(): void;
}

/** Opens `file` directly with better-sqlite3 (creating it). */
export function seedDb(file: string): SeedDb {
  const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => SeedDb;
  return new Database(file);
}

/** Read options: 100 rows, 5 s. */
export const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 5_000, readOnly: true };
/** Write options: as READ, on a writable call. */
export const WRITE: ExecuteOptions = { ...READ, readOnly: false };

/** A statement that never ends on its own. */
export const RUNAWAY = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c';

export interface SqliteTestFile {
  readonly dir: string;
  readonly file: string;
  /** Opens a connection through the driver, with `?query` appended to the URL; closed by `cleanup`. */
  connect(query?: string): Promise<SqliteConnection>;
  /** Closes every connection opened and removes the folder. */
  cleanup(): Promise<void>;
}

/** A SQLite file in a fresh temp folder, seeded by `seed`. */
export function sqliteTestFile(seed: (db: SeedDb) => void): SqliteTestFile {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-sqlite-'));
  const file = join(dir, 'test.db');
  const db = seedDb(file);
  seed(db);
  db.close();
  const opened: SqliteConnection[] = [];
  return {
    dir,
    file,
    async connect(query = '') {
      const driver = createSqliteDriver(parseConnectionUrl(`sqlite:${file}${query}`).target, {}, { connectTimeoutMs: 5_000 });
      const connection = (await driver.connect()) as SqliteConnection;
      opened.push(connection);
      return connection;
    },
    async cleanup() {
      await Promise.all(opened.map((c) => c.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
