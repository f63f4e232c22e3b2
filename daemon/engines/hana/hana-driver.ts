import type { Target } from '../../../shared/connection-url.js';
import type { Driver, DriverConnection, DriverFactory, DriverSecret, DriverSettings } from '../driver.js';
import { settleQuietly } from './callbacks.js';
import { buildHanaConnectOptions, type HanaConnectOptions } from './connect-options.js';
import type { HanaConnectionLike } from './hana-client-types.js';
import { HanaConnection } from './hana-connection.js';
import { connectError } from './hana-errors.js';
import { type HanaClientLoader, importHanaClient, loadHanaClient } from './load-client.js';

/** Extra time our own timer gives the client's `connectTimeout` before giving up on it. */
const CONNECT_BACKSTOP_MS = 2_000;

export interface HanaDriverDeps {
  /** Loads `@sap/hana-client`; tests pass a failing or fake loader. */
  readonly loadClient?: HanaClientLoader;
  /** See `HanaConnectionOptions.cancelGraceMs`. */
  readonly cancelGraceMs?: number;
}

/**
 * Opens SAP HANA sessions for one target. The URL's options are checked when the driver is
 * built (INVALID_URL before any network); `@sap/hana-client` is loaded on the first connect.
 */
export class HanaDriver implements Driver {
  readonly engine = 'hana' as const;
  readonly #options: HanaConnectOptions;
  readonly #password: string | undefined;
  readonly #deps: HanaDriverDeps;

  constructor(target: Target, secret: DriverSecret, settings: DriverSettings, deps: HanaDriverDeps = {}) {
    this.#options = buildHanaConnectOptions(target, settings);
    this.#password = secret.password;
    this.#deps = deps;
  }

  /** The client's connect options without the password. */
  get connectOptions(): HanaConnectOptions {
    return this.#options;
  }

  async connect(): Promise<DriverConnection> {
    const client = await loadHanaClient(this.#deps.loadClient ?? importHanaClient);
    const options = this.#options;
    const conn = client.createConnection();
    const where = {
      serverNode: options.serverNode,
      timeoutMs: options.connectTimeout,
      ...(options.databaseName ? { databaseName: options.databaseName } : {}),
    };
    try {
      await connectWithin(conn, options, this.#password, options.connectTimeout + CONNECT_BACKSTOP_MS);
    } catch (err) {
      // Never connected (or still connecting, which connectWithin cleans up): nothing to close.
      throw connectError(err, where, [this.#password]);
    }
    try {
      conn.setAutoCommit(true);
    } catch (err) {
      await settleQuietly((cb) => conn.disconnect(cb), options.connectTimeout);
      throw connectError(err, where, [this.#password]);
    }
    try {
      conn.setClientInfo?.('APPLICATION', 'hanactl');
    } catch {
      // Only a label in M_SESSION_CONTEXT; never worth failing a connect.
    }
    return new HanaConnection(conn, {
      serverNode: options.serverNode,
      communicationTimeoutMs: options.connectTimeout,
      ...(this.#deps.cancelGraceMs !== undefined ? { cancelGraceMs: this.#deps.cancelGraceMs } : {}),
    });
  }
}

/**
 * Connects with the password added to a throwaway copy of the options, the only place it is
 * ever passed. Our own timer backs up the client's `connectTimeout`; a connect that still
 * succeeds after we gave up is disconnected at once.
 */
function connectWithin(conn: HanaConnectionLike, options: HanaConnectOptions, password: string | undefined, ms: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      reject(new Error(`Connect timeout expired after ${ms} ms`));
    }, ms);
    try {
      conn.connect({ ...options, ...(password !== undefined ? { pwd: password } : {}) }, (err) => {
        if (done) {
          if (!err) conn.disconnect(() => undefined);
          return;
        }
        done = true;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve();
      });
    } catch (err) {
      done = true;
      clearTimeout(timer);
      reject(err);
    }
  });
}

/** The HANA driver factory the composition root registers for `hana://` targets. */
export const createHanaDriver: DriverFactory = (target, secret, settings) => new HanaDriver(target, secret, settings);
