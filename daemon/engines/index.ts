import type { Engine } from '../../shared/connection-url.js';
import type { DriverFactory } from './driver.js';

/**
 * Drivers load lazily, on first use of their engine: a daemon that serves only SQLite never
 * loads `pg`, `mysql2` or the HANA client.
 */
const LOADERS: Record<Engine, () => Promise<DriverFactory>> = {
  sqlite: async () => (await import('./sqlite/index.js')).createSqliteDriver,
  postgres: async () => (await import('./postgres/index.js')).createPostgresDriver,
  mysql: async () => (await import('./mysql/index.js')).createMysqlDriver,
  hana: async () => (await import('./hana/index.js')).createHanaDriver,
};

/** The driver factory for an engine. */
export function loadDriverFactory(engine: Engine): Promise<DriverFactory> {
  return LOADERS[engine]();
}

export type {
  CostGuard,
  Driver,
  DriverCapabilities,
  DriverConnection,
  DriverFactory,
  DriverSecret,
  DriverSettings,
  ExecuteOptions,
  StatementResult,
} from './driver.js';
