import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { expect } from 'vitest';
import type { Driver, DriverSettings, ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { createMysqlDriver } from '../../../../../daemon/engines/mysql/index.js';
import { parseConnectionUrl, type Target } from '../../../../../shared/connection-url.js';
import { HanactlError } from '../../../../../shared/errors.js';

/**
 * The MariaDB/MySQL these integration tests run against. Defaults to the local server; CI can
 * point elsewhere with HANACTL_TEST_MYSQL_URL and HANACTL_TEST_MYSQL_PASSWORD.
 */
export const MYSQL_URL = process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
export const MYSQL_PASSWORD = process.env.HANACTL_TEST_MYSQL_PASSWORD ?? '';
export const TARGET: Target = parseConnectionUrl(MYSQL_URL).target;
export const SETTINGS: DriverSettings = { connectTimeoutMs: 5000 };

export const READ: ExecuteOptions = { maxRows: 1000, timeoutMs: 10_000, readOnly: true };
export const WRITE: ExecuteOptions = { maxRows: 1000, timeoutMs: 10_000, readOnly: false };

/** A bare mysql2 connection for setup and observation, independent of the code under test. */
export function openAdmin(): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: TARGET.host,
    port: TARGET.port,
    user: TARGET.user,
    password: MYSQL_PASSWORD,
    database: TARGET.database,
    connectTimeout: 3000,
  });
}

async function probe(): Promise<string | undefined> {
  try {
    const admin = await openAdmin();
    await admin.end();
    return undefined;
  } catch (err) {
    return `MariaDB/MySQL is not reachable at ${TARGET.host}:${TARGET.port} (${(err as Error).message}). Start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd (or set HANACTL_TEST_MYSQL_URL / HANACTL_TEST_MYSQL_PASSWORD).`;
  }
}

/** Why the suite is skipped, or undefined when the server answers. In CI an absent server fails. */
export const skipReason = await probe();
if (skipReason) {
  if (process.env.CI) throw new Error(skipReason);
  console.warn(`[mysql tests skipped] ${skipReason}`);
}

/** Drops the scratch tables `names` (those that exist) on an admin connection of its own. */
export async function dropTables(...names: string[]): Promise<void> {
  const admin = await openAdmin();
  for (const name of names) await admin.query(`DROP TABLE IF EXISTS \`${name}\``);
  await admin.end();
}

/** A name no other test file (or run) uses: scratch tables, throwaway users. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** A driver for the test server, optionally with another URL or password. */
export function makeDriver(
  url: string = MYSQL_URL,
  password: string | undefined = MYSQL_PASSWORD,
  settings: DriverSettings = SETTINGS,
): Driver {
  return createMysqlDriver(parseConnectionUrl(url).target, password === undefined ? {} : { password }, settings);
}

/** The test URL with another user (and no password in it). */
export function urlForUser(user: string): string {
  const u = new URL(MYSQL_URL);
  u.username = user;
  u.password = '';
  return u.toString();
}

/** Resolves with the rejection of `p`, a HanactlError (failing when it resolves or rejects with anything else). */
export async function failure(p: Promise<unknown>): Promise<HanactlError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return err as HanactlError;
  }
  throw new Error('expected a rejection');
}
