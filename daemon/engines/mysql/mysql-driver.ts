import type { Target } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import { installRoot } from '../../../shared/install-root.js';
import type { Driver, DriverConnection, DriverFactory, DriverSecret, DriverSettings } from '../driver.js';
import { MysqlConnection } from './mysql-connection.js';
import { connectError, type ErrorContext } from './mysql-errors.js';
import { loadMysqlModule, type MysqlModule, type MysqlRawConnection } from './mysql-module.js';
import { connectOptions, type MysqlUrlPlan, planMysqlUrl, tlsOptions } from './mysql-options.js';
import { boundServerPackets, type MysqlParserHost } from './mysql-packet-bound.js';
import { serverInfo } from './mysql-session.js';

/** The KILL connection is short-lived; it never waits longer than this to connect. */
const KILL_CONNECT_TIMEOUT_MS = 5000;
/** And the KILL itself answers at once, or the server is in no state to help. */
const KILL_ROUND_TRIP_MS = 5000;
/** How often a killed thread is looked for in PROCESSLIST until it is gone. */
const THREAD_WATCH_MS = 200;

/** One text-protocol round trip on a bare mysql2 connection; resolves with its rows. */
function roundTrip(raw: MysqlRawConnection, sql: string, timeoutMs: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(Object.assign(new Error(`No answer to "${sql}" within ${timeoutMs} ms.`), { code: 'ETIMEDOUT' })),
      timeoutMs,
    );
    timer.unref();
    raw.query({ sql, rowsAsArray: true }, (err, rows) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(rows);
    });
  });
}

/** mysql2 keeps the connect options, password included, on `config`: hide them from enumeration. */
function hideSecrets(config: object): void {
  for (const key of Object.keys(config)) {
    if (/^pass/i.test(key)) Object.defineProperty(config, key, { enumerable: false });
  }
}

function endQuietly(raw: MysqlRawConnection): void {
  const cut = setTimeout(() => raw.stream?.destroy(), 1000);
  cut.unref();
  try {
    raw.end(() => clearTimeout(cut));
  } catch {
    raw.stream?.destroy();
  }
}

/**
 * Opens MySQL/MariaDB connections with `mysql2`, loaded on the first connect. The URL's options
 * are checked when the driver is built, so a bad URL fails before any network traffic.
 */
export class MysqlDriver implements Driver {
  readonly engine = 'mysql' as const;
  readonly #target: Target;
  readonly #settings: DriverSettings;
  readonly #plan: MysqlUrlPlan;
  readonly #errors: ErrorContext;
  readonly #load: () => Promise<MysqlModule>;
  /** Private field: never enumerable, never in an inspect or a JSON dump. */
  readonly #password: string | undefined;

  constructor(target: Target, secret: DriverSecret, settings: DriverSettings, load: () => Promise<MysqlModule> = loadMysqlModule) {
    if (target.engine !== 'mysql') throw new HanactlError('INVALID_URL', `The MySQL driver cannot open a ${target.engine} URL.`);
    this.#plan = planMysqlUrl(target);
    this.#target = target;
    this.#settings = settings;
    this.#password = secret.password;
    this.#load = load;
    const host = target.host?.includes(':') ? `[${target.host}]` : target.host;
    this.#errors = {
      where: this.#plan.socketPath ?? `${host}:${target.port}`,
      ...(target.user !== undefined ? { user: target.user } : {}),
      ...(target.database !== undefined ? { database: target.database } : {}),
      connectTimeoutMs: settings.connectTimeoutMs,
    };
  }

  async connect(): Promise<DriverConnection> {
    const raw = await this.#open(this.#settings.connectTimeoutMs);
    try {
      const rows = (await roundTrip(raw, 'SELECT VERSION()', this.#settings.connectTimeoutMs)) as unknown[][];
      const version = String(rows[0]?.[0] ?? '');
      return new MysqlConnection(raw, {
        server: serverInfo(version),
        errors: this.#errors,
        killQuery: (threadId) => this.#killQuery(threadId),
        endThread: (threadId) => this.#endThread(threadId),
      });
    } catch (err) {
      raw.destroy();
      raw.stream?.destroy();
      throw connectError(err, this.#errors, [this.#password]);
    }
  }

  async #open(connectTimeoutMs: number): Promise<MysqlRawConnection> {
    let mysql: MysqlModule;
    try {
      mysql = await this.#load();
    } catch {
      throw new HanactlError('DRIVER_UNAVAILABLE', `The MySQL driver (mysql2) could not be loaded; run npm install in ${installRoot()}.`);
    }
    const ssl = await tlsOptions(this.#plan);
    let raw: MysqlRawConnection;
    try {
      raw = mysql.createConnection(connectOptions(this.#target, this.#plan, this.#settings, this.#password, ssl, connectTimeoutMs));
    } catch (err) {
      throw connectError(err, this.#errors, [this.#password]);
    }
    // No payload is assembled past MAX_SERVER_MESSAGE_BYTES (a row too wide fails its call, not the daemon).
    boundServerPackets(raw as unknown as MysqlParserHost);
    // Later errors belong to the MysqlConnection; this keeps a stray one from crashing the daemon.
    raw.on('error', () => {});
    try {
      await new Promise<void>((resolve, reject) => raw.connect((err) => (err ? reject(err) : resolve())));
    } catch (err) {
      raw.destroy();
      raw.stream?.destroy();
      throw connectError(err, this.#errors, [this.#password]);
    }
    hideSecrets(raw.config);
    return raw;
  }

  /**
   * `KILL CONNECTION` from a second connection, which then asks PROCESSLIST until the thread is no
   * longer there: the server closes the killed session's socket at once, while its thread runs on
   * until it next checks its kill flag. Rejects when the KILL cannot be sent; resolves, watching
   * no further, when the second connection fails after it.
   */
  async #endThread(threadId: number): Promise<void> {
    if (!Number.isSafeInteger(threadId) || threadId <= 0) throw new Error(`Invalid thread id ${threadId}.`);
    const raw = await this.#open(Math.min(this.#settings.connectTimeoutMs, KILL_CONNECT_TIMEOUT_MS));
    try {
      await roundTrip(raw, `KILL CONNECTION ${threadId}`, KILL_ROUND_TRIP_MS);
      const listed = `SELECT 1 FROM information_schema.PROCESSLIST WHERE ID = ${threadId}`;
      try {
        while (((await roundTrip(raw, listed, KILL_ROUND_TRIP_MS)) as unknown[]).length > 0)
          await new Promise((resolve) => setTimeout(resolve, THREAD_WATCH_MS));
      } catch {
        // The watching connection failed: nothing more can be learnt of the thread.
      }
    } finally {
      endQuietly(raw);
    }
  }

  /** `KILL QUERY` from a second, short-lived connection: the only way to stop a running statement. */
  async #killQuery(threadId: number): Promise<void> {
    if (!Number.isSafeInteger(threadId) || threadId <= 0) throw new Error(`Invalid thread id ${threadId}.`);
    const raw = await this.#open(Math.min(this.#settings.connectTimeoutMs, KILL_CONNECT_TIMEOUT_MS));
    try {
      await roundTrip(raw, `KILL QUERY ${threadId}`, KILL_ROUND_TRIP_MS);
    } finally {
      endQuietly(raw);
    }
  }
}

/** The MySQL/MariaDB driver factory (`mysql://` and `mariadb://` URLs). */
export const createMysqlDriver: DriverFactory = (target, secret, settings) => new MysqlDriver(target, secret, settings);
