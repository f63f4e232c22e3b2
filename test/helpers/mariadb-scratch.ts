import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll } from 'vitest';
import type { Driver, DriverConnection } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { MYSQL_URL } from './engines.js';
import { openMariadbAdmin } from './mariadb-login.js';

/** A MariaDB scratch database for the suite around the call, and read-only calls on it through the real driver. */
export interface MariadbScratch {
  /** The database's name: `${prefix}_<pid>_<random>`. */
  readonly name: string;
  /** The server's own user in the database, multiple statements allowed (once the suite's set-up ran). */
  admin(): mysql.Connection;
  /**
   * A read-only call of `sql` through the driver (a new connection if the last one broke):
   * `ran: <first row as JSON>`, `refused` (with `: <message>` if `refusalMessages`) where the
   * stored-routine rule refused it, or `failed: <the start of the error>`.
   */
  viaDriver(sql: string): Promise<string>;
}

export interface MariadbScratchOptions {
  /** Whether a refusal says its message after `refused: `. */
  readonly refusalMessages?: boolean;
  /** How long the set-up may take. */
  readonly setUpTimeoutMs?: number;
}

/**
 * Creates the database before the suite around the call, runs `setUp` in it as the server's own
 * user and opens the driver's connection to it; after the suite, releases the admin session's
 * locks and drops the database.
 */
export function mariadbScratch(
  prefix: string,
  setUp: (admin: mysql.Connection) => Promise<void>,
  { refusalMessages = false, setUpTimeoutMs = 120_000 }: MariadbScratchOptions = {},
): MariadbScratch {
  const name = `${prefix}_${process.pid}_${randomBytes(3).toString('hex')}`;
  let admin: mysql.Connection | undefined;
  let driver: Driver | undefined;
  let conn: DriverConnection | undefined;

  beforeAll(async () => {
    admin = await openMariadbAdmin({ database: false, multipleStatements: true });
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`USE ${name}`);
    await setUp(admin);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${name}`;
    const { target, password } = parseConnectionUrl(url.toString());
    const factory = await loadDriverFactory(target.engine);
    driver = factory(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
    conn = await driver.connect();
  }, setUpTimeoutMs);

  afterAll(async () => {
    await conn?.close();
    await admin?.query(`DO RELEASE_ALL_LOCKS(); DROP DATABASE IF EXISTS ${name}`);
    await admin?.end();
  });

  return {
    name,
    admin() {
      if (!admin) throw new Error(`the scratch database ${name} was not created`);
      return admin;
    },
    async viaDriver(sql) {
      if (!driver || !conn) throw new Error(`the scratch database ${name} was not created`);
      if (conn.broken) conn = await driver.connect();
      try {
        const result = await conn.execute(sql, [], { maxRows: 1, timeoutMs: 5000, readOnly: true });
        return `ran: ${JSON.stringify(result.rows[0] ?? null)}`;
      } catch (error) {
        const details = (error as { details?: { rule?: string } }).details;
        if (details?.rule === 'stored-routine') return refusalMessages ? `refused: ${(error as Error).message}` : 'refused';
        return `failed: ${(error as Error).message.slice(0, 120)}`;
      }
    },
  };
}
