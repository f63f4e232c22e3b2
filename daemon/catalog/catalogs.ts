import type { Engine } from '../../shared/connection-url.js';
import { HanaCatalog } from '../engines/hana/hana-catalog.js';
import { MysqlCatalog } from '../engines/mysql/mysql-catalog.js';
import { PostgresCatalog } from '../engines/postgres/postgres-catalog.js';
import { SqliteCatalog } from '../engines/sqlite/sqlite-catalog.js';
import type { Catalog } from './catalog.js';

/** One stateless catalog per engine: the only place the engine decides which one serves a call. */
export const CATALOGS: Readonly<Record<Engine, Catalog>> = {
  sqlite: new SqliteCatalog(),
  postgres: new PostgresCatalog(),
  mysql: new MysqlCatalog(),
  hana: new HanaCatalog(),
};
