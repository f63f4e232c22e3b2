import { ENGINES, type Engine } from '../../shared/engines.js';
import type { Catalog } from '../catalog/catalog.js';
import type { DialectPolicy } from '../policy/dialects.js';
import type { DriverFactory } from './driver.js';
import { HanaCatalog } from './hana/hana-catalog.js';
import { HANA_DIALECT } from './hana/hana-dialect.js';
import { MysqlCatalog } from './mysql/mysql-catalog.js';
import { mysqlCostLimitUnavailable } from './mysql/mysql-cost.js';
import { MYSQL_DIALECT } from './mysql/mysql-dialect.js';
import { MYSQL_PRIVILEGE_PROBE } from './mysql/mysql-privileges.js';
import { PostgresCatalog } from './postgres/postgres-catalog.js';
import { POSTGRES_DIALECT } from './postgres/postgres-dialect.js';
import { POSTGRES_PRIVILEGE_PROBE } from './postgres/postgres-privileges.js';
import { postgresContextSql } from './postgres/postgres-signed-context.js';
import type { PrivilegeProbe } from './privilege-probe.js';
import type { ContextSqlOptions } from './signed-context.js';
import { SqliteCatalog } from './sqlite/sqlite-catalog.js';
import { sqliteCostLimitUnavailable } from './sqlite/sqlite-cost.js';
import { SQLITE_DIALECT } from './sqlite/sqlite-dialect.js';

/** What differs between engines in behaviour the broker decides, read where it decides it. */
export interface EngineCapabilities {
  /**
   * A cost limit (`--max-cost`): always kept, never (no plan cost), or only on servers whose
   * version gives one (MariaDB before 11.0 does not), so it is set after the server said which.
   */
  readonly costLimit: 'always' | 'never' | 'by-server-version';
}

/** Everything one engine is, as the rest of the daemon sees it. */
export interface EngineEntry {
  /**
   * The driver factory, imported on first use of the engine: a daemon that serves only SQLite
   * never loads `pg`, `mysql2` or the HANA client. Keep it a dynamic import.
   */
  readonly loadDriver: () => Promise<DriverFactory>;
  /** The stateless catalog reader (tables, describe, routines, search, explain). */
  readonly catalog: Catalog;
  /** What the statement policy knows about the engine's SQL. */
  readonly dialect: DialectPolicy;
  /** The most UTF-8 bytes a context value may have (refused, never truncated, beyond it). */
  readonly contextValueMaxBytes: number;
  readonly capabilities: EngineCapabilities;
  /**
   * Why a connection keeps no cost limit (`--max-cost`), or undefined when it can: given where
   * `costLimit` is not 'always'. `serverVersion` is what the server reported, for
   * 'by-server-version'; without it, only what holds on every server of the engine is said.
   */
  readonly costLimitUnavailable?: (serverVersion?: string) => string | undefined;
  /**
   * The SQL that installs the database function checking signed context values (`hanactl
   * context-sql`); given where context values can be signed (`hanactl set --signed-context`).
   */
  readonly signedContextSql?: (options: ContextSqlOptions) => string;
  /** Where a login could read credentials, asked when a connection is added or tested; none where the engine has no such roles. */
  readonly privilegeProbe?: PrivilegeProbe;
}

/** The engines, one row each: adding an engine is one folder under engines/ and one row here. */
export const ENGINE_TABLE: Readonly<Record<Engine, EngineEntry>> = {
  sqlite: {
    loadDriver: async () => (await import('./sqlite/index.js')).createSqliteDriver,
    catalog: new SqliteCatalog(),
    dialect: SQLITE_DIALECT,
    contextValueMaxBytes: 4096,
    capabilities: { costLimit: 'never' },
    costLimitUnavailable: sqliteCostLimitUnavailable,
  },
  postgres: {
    loadDriver: async () => (await import('./postgres/index.js')).createPostgresDriver,
    catalog: new PostgresCatalog(),
    dialect: POSTGRES_DIALECT,
    contextValueMaxBytes: 4096,
    capabilities: { costLimit: 'always' },
    signedContextSql: postgresContextSql,
    privilegeProbe: POSTGRES_PRIVILEGE_PROBE,
  },
  mysql: {
    loadDriver: async () => (await import('./mysql/index.js')).createMysqlDriver,
    catalog: new MysqlCatalog(),
    dialect: MYSQL_DIALECT,
    contextValueMaxBytes: 4096,
    capabilities: { costLimit: 'by-server-version' },
    costLimitUnavailable: mysqlCostLimitUnavailable,
    privilegeProbe: MYSQL_PRIVILEGE_PROBE,
  },
  hana: {
    loadDriver: async () => (await import('./hana/index.js')).createHanaDriver,
    catalog: new HanaCatalog(),
    dialect: HANA_DIALECT,
    contextValueMaxBytes: 5000,
    capabilities: { costLimit: 'always' },
  },
};

/** One column of the table, by engine. */
function column<K extends keyof EngineEntry>(key: K): Readonly<Record<Engine, EngineEntry[K]>> {
  return Object.fromEntries(ENGINES.map((engine) => [engine, ENGINE_TABLE[engine][key]])) as Record<Engine, EngineEntry[K]>;
}

/** Each engine's statement-policy dialect (the table's `dialect` column). */
export const DIALECTS = column('dialect');
/** Each engine's catalog (the table's `catalog` column). */
export const CATALOGS = column('catalog');

/**
 * Why a connection of `engine` keeps no cost limit, or undefined when it can (the row's
 * `costLimitUnavailable`); `serverVersion` as its server reported it, when known.
 */
export function costGuardUnavailable(engine: Engine, serverVersion?: string): string | undefined {
  return ENGINE_TABLE[engine].costLimitUnavailable?.(serverVersion);
}

/** Whether context values can be signed on `engine` (its row gives `signedContextSql`). */
export function signsContext(engine: Engine): boolean {
  return ENGINE_TABLE[engine].signedContextSql !== undefined;
}

/** The driver factory for an engine. */
export function loadDriverFactory(engine: Engine): Promise<DriverFactory> {
  return ENGINE_TABLE[engine].loadDriver();
}

export type {
  CostGuard,
  Driver,
  DriverConnection,
  DriverFactory,
  DriverSecret,
  DriverSettings,
  ExecuteOptions,
  StatementResult,
} from './driver.js';
