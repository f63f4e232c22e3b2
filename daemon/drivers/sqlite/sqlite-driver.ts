import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import type { Target } from '../../../shared/connection-url.js';
import { HanactlError } from '../../../shared/errors.js';
import type { Driver, DriverCapabilities, DriverConnection, DriverFactory } from '../driver.js';
import { SqliteConnection, type SqliteDatabase } from './sqlite-connection.js';

const require = createRequire(import.meta.url);

const CAPABILITIES: DriverCapabilities = {
  placeholders: 'question',
  serverCancel: false,
  readOnlySession: true,
  contextMechanism: 'function',
};

const KNOWN_OPTIONS = new Set(['mode']);

type SqliteConstructor = new (path: string, options: { readonly?: boolean; fileMustExist?: boolean; timeout?: number }) => SqliteDatabase;

/**
 * SQLite files, embedded: no server, so "connecting" opens the file. The file must exist
 * (a typo must not silently create an empty database); `?mode=ro` opens it read-only.
 */
export const createSqliteDriver: DriverFactory = (target: Target): Driver => {
  for (const key of Object.keys(target.options)) {
    if (!KNOWN_OPTIONS.has(key)) throw new HanactlError('INVALID_URL', `The SQLite URL option "${key}" is not supported; known options: mode=ro.`);
  }
  const path = target.path ?? '';
  const readonly = target.options.mode === 'ro';
  return {
    engine: 'sqlite',
    capabilities: CAPABILITIES,
    async connect(): Promise<DriverConnection> {
      if (path !== ':memory:' && !existsSync(path)) {
        throw new HanactlError('CONNECT_FAILED', `The SQLite file ${path} does not exist; check the path given to \`hanactl add\`.`);
      }
      const Database = require('better-sqlite3-multiple-ciphers') as SqliteConstructor;
      try {
        const db = new Database(path, { readonly, fileMustExist: path !== ':memory:', timeout: 5000 });
        return new SqliteConnection(db);
      } catch (err) {
        throw new HanactlError('CONNECT_FAILED', `Cannot open the SQLite file ${path}: ${(err as Error).message}`);
      }
    },
  };
};
