import { readFile } from 'node:fs/promises';
import { type Target, URL_OPTIONS } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import type { DriverSettings } from '../driver.js';
import type { MysqlConnectOptions, MysqlTlsOptions } from './mysql-module.js';

/** How TLS is used: off, encrypted without checks, chain checked, chain and host name checked. */
export type TlsMode = 'disable' | 'require' | 'verify-ca' | 'verify-full';

/** What the URL's query asked for, validated before any connection is opened. */
export interface MysqlUrlPlan {
  readonly tls: TlsMode;
  /** PEM file paths, read at connect time. */
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  /** A Unix socket to use instead of host:port. */
  readonly socketPath?: string;
}

/** The URL options a MySQL/MariaDB connection accepts; anything else is refused by name. */
export const MYSQL_URL_OPTIONS = URL_OPTIONS.mysql;

const SSLMODES: Readonly<Record<string, TlsMode>> = {
  disable: 'disable',
  disabled: 'disable',
  require: 'require',
  required: 'require',
  'verify-ca': 'verify-ca',
  verify_ca: 'verify-ca',
  'verify-full': 'verify-full',
  'verify-identity': 'verify-full',
  verify_identity: 'verify-full',
};

const SSL_FLAGS: Readonly<Record<string, TlsMode>> = { true: 'verify-full', '1': 'verify-full', false: 'disable', '0': 'disable' };

function invalid(message: string): HanactlError {
  return new HanactlError('INVALID_URL', message);
}

/**
 * Validates a target's URL options. `ssl=true` means verified TLS (chain and host name);
 * `sslmode` takes the MySQL (`REQUIRED`, `VERIFY_IDENTITY`) or PostgreSQL (`require`,
 * `verify-full`) spellings. `prefer` is refused: mysql2 cannot fall back from TLS to plain
 * text, and silently choosing either would surprise someone.
 */
export function planMysqlUrl(target: Target): MysqlUrlPlan {
  const known = new Set<string>(MYSQL_URL_OPTIONS);
  for (const key of Object.keys(target.options)) {
    if (!known.has(key)) {
      throw invalid(`The MySQL URL option "${key}" is not supported; known options: ${MYSQL_URL_OPTIONS.join(', ')}.`);
    }
  }
  const opts = target.options;
  if (opts.sslmode !== undefined && opts['ssl-mode'] !== undefined)
    throw invalid('Give "sslmode" or "ssl-mode" in the MySQL URL, not both.');
  const modeText = opts.sslmode ?? opts['ssl-mode'];
  if (modeText !== undefined && opts.ssl !== undefined) throw invalid('Give "ssl" or "sslmode" in the MySQL URL, not both.');

  let tls: TlsMode | undefined;
  if (modeText !== undefined) {
    const key = modeText.trim().toLowerCase();
    if (key === 'prefer' || key === 'preferred' || key === 'allow') {
      throw invalid(
        `sslmode=${modeText} is not supported for MySQL: the driver cannot fall back between TLS and plain text. Use sslmode=require, verify-ca, verify-full or disable.`,
      );
    }
    tls = SSLMODES[key];
    if (!tls) throw invalid(`sslmode=${modeText} is not a known TLS mode; use disable, require, verify-ca or verify-full.`);
  } else if (opts.ssl !== undefined) {
    tls = SSL_FLAGS[opts.ssl.trim().toLowerCase()];
    if (!tls) throw invalid(`ssl=${opts.ssl} is not understood; use ssl=true or ssl=false (or sslmode=...).`);
  }

  const files = { caFile: opts.sslca, certFile: opts.sslcert, keyFile: opts.sslkey };
  const anyFile = files.caFile !== undefined || files.certFile !== undefined || files.keyFile !== undefined;
  if (anyFile && tls === 'disable') throw invalid('The MySQL URL names TLS files (sslca, sslcert, sslkey) but turns TLS off.');
  if ((files.certFile === undefined) !== (files.keyFile === undefined))
    throw invalid('Give both "sslcert" and "sslkey" in the MySQL URL, or neither.');
  for (const [name, value] of [
    ['sslca', files.caFile],
    ['sslcert', files.certFile],
    ['sslkey', files.keyFile],
    ['socket', opts.socket],
  ] as const) {
    if (value !== undefined && value.trim() === '') throw invalid(`The MySQL URL option "${name}" is empty.`);
  }
  // A CA file without a mode means "verify against this CA", the strict reading.
  const mode: TlsMode = tls ?? (anyFile ? 'verify-full' : 'disable');
  return {
    tls: mode,
    ...(files.caFile !== undefined ? { caFile: files.caFile } : {}),
    ...(files.certFile !== undefined ? { certFile: files.certFile } : {}),
    ...(files.keyFile !== undefined ? { keyFile: files.keyFile } : {}),
    ...(opts.socket !== undefined ? { socketPath: opts.socket } : {}),
  };
}

async function readPem(path: string, option: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new HanactlError('CONNECT_FAILED', `Could not read the file named by the MySQL URL option "${option}" (${path}): ${code}.`);
  }
}

/** The mysql2 TLS options for a plan; undefined when TLS is off. Reads the PEM files. */
export async function tlsOptions(plan: MysqlUrlPlan): Promise<MysqlTlsOptions | undefined> {
  if (plan.tls === 'disable') return undefined;
  const ca = plan.caFile !== undefined ? await readPem(plan.caFile, 'sslca') : undefined;
  const cert = plan.certFile !== undefined ? await readPem(plan.certFile, 'sslcert') : undefined;
  const key = plan.keyFile !== undefined ? await readPem(plan.keyFile, 'sslkey') : undefined;
  return {
    rejectUnauthorized: plan.tls !== 'require',
    minVersion: 'TLSv1.2',
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert } : {}),
    ...(key !== undefined ? { key } : {}),
    // verify-ca checks the chain but not the host name.
    ...(plan.tls === 'verify-ca' ? { checkServerIdentity: () => undefined } : {}),
  };
}

/**
 * The mysql2 options for one connection. Value choices, all deliberate:
 * - `multipleStatements: false`: one call runs exactly one statement.
 * - `flags: ['-IGNORE_SPACE']`: mysql2 asks for IGNORE_SPACE at the handshake, but the per-borrow
 *   COM_RESET_CONNECTION drops it again; without it a fresh and a reused session parse alike.
 * - `supportBigNumbers` + `bigNumberStrings`: BIGINT and DECIMAL arrive as exact strings; the
 *   driver turns integers back into numbers only when they are safe (see mysql-types.ts), and
 *   `decimalNumbers: false` keeps DECIMAL a string, so nothing passes through a float.
 * - `dateStrings: ['DATE']`: a DATE stays the calendar day the server wrote (`2024-02-29`), as
 *   PostgreSQL's does; no midnight-UTC instant is invented for it.
 * - `timezone: 'Z'`: DATETIME/TIMESTAMP become Dates read as UTC and are rendered ISO-8601 with `Z`. The session's `time_zone` is set to `+00:00` too (see
 *   mysql-session.ts), so TIMESTAMP (stored in UTC) comes back as true UTC and DATETIME (no zone)
 *   comes back as written. JavaScript Dates keep milliseconds: DATETIME(6) loses its last three
 *   digits, and zero dates (`0000-00-00`) become null.
 * - `charset: utf8mb4`: emoji and every other code point survive.
 * - `maxPreparedStatements: 100`: server-side statements are cached per connection, but agent SQL
 *   is mostly unique, and the server's `max_prepared_stmt_count` is shared by every client.
 * - `disableEval`: rows are parsed by mysql2's static parser, not by code generated from the
 *   server's column names. The generated parser throws on a column named `__proto__` (a fatal
 *   error that kills the connection); the static one, with `rowsAsArray`, does not care. It is
 *   slower per row (about 4.7 vs 2.6 µs for 4 columns), which a capped result never feels.
 * - `-LOCAL_FILES`: `LOAD DATA LOCAL INFILE` could read the daemon's files; never allowed.
 */
export function connectOptions(
  target: Target,
  plan: MysqlUrlPlan,
  settings: DriverSettings,
  password: string | undefined,
  ssl: MysqlTlsOptions | undefined,
  connectTimeoutMs = settings.connectTimeoutMs,
): MysqlConnectOptions {
  return {
    ...(plan.socketPath !== undefined ? { socketPath: plan.socketPath } : { host: target.host, port: target.port }),
    ...(target.user !== undefined ? { user: target.user } : {}),
    ...(password !== undefined ? { password } : {}),
    ...(target.database !== undefined ? { database: target.database } : {}),
    connectTimeout: connectTimeoutMs,
    multipleStatements: false,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
    dateStrings: ['DATE'],
    timezone: 'Z',
    charset: 'UTF8MB4_UNICODE_CI',
    maxPreparedStatements: 100,
    disableEval: true,
    flags: ['-LOCAL_FILES', '-IGNORE_SPACE'],
    ...(ssl ? { ssl } : {}),
  };
}
