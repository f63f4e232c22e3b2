import { existsSync } from 'node:fs';
import { cliCommand } from '../../../shared/cli-command.js';
import { type Target, URL_OPTIONS } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import type { Driver, DriverConnection, DriverFactory, DriverSecret, DriverSettings } from '../driver.js';
import { SqliteConnection } from './sqlite-connection.js';

const KNOWN_OPTIONS = new Set<string>(URL_OPTIONS.sqlite);

/**
 * Each connection is a host process of about 12 MB, and SQLite's reads are local and fast, so a
 * file gets fewer of them than a server's pool (10), and an idle one ends after 30 s instead of
 * 5 min. Four still leave room beside a runaway statement, which holds its host until its
 * deadline.
 */
const POOL_DEFAULTS = { max: 4, idleTimeoutMillis: 30_000 } as const;

/**
 * A host is a local process, not a server that may be gone: on a loaded machine it can take
 * seconds to start, which is slow, not failed. Connecting waits at least this long, whatever a
 * shorter `connectTimeoutMs` (meant for servers) says.
 */
const HOST_START_MS = 10_000;

/**
 * SQLite files, embedded: no server, so "connecting" starts a worker process that opens the
 * file (see `SqliteConnection`). The file must exist (a typo must not silently create an
 * empty database); `?mode=ro` opens it read-only. `connect()` waits at most
 * `settings.connectTimeoutMs` (never less than 10 s) for the worker to open it.
 */
export const createSqliteDriver: DriverFactory = (target: Target, _secret: DriverSecret, settings: DriverSettings): Driver => {
  for (const key of Object.keys(target.options)) {
    if (!KNOWN_OPTIONS.has(key))
      throw new HanactlError('INVALID_URL', `The SQLite URL option "${key}" is not supported; known options: mode=ro.`);
  }
  const path = target.path ?? '';
  const readonly = target.options.mode === 'ro';
  return {
    engine: 'sqlite',
    poolDefaults: POOL_DEFAULTS,
    async connect(): Promise<DriverConnection> {
      if (path !== ':memory:' && !existsSync(path)) {
        throw new HanactlError('CONNECT_FAILED', `The SQLite file ${path} does not exist; check the path given to \`${cliCommand()} add\`.`);
      }
      return SqliteConnection.open({ path, readonly, connectTimeoutMs: Math.max(settings.connectTimeoutMs, HOST_START_MS) });
    },
  };
};
