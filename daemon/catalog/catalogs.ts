import type { Engine } from '../../shared/connection-url.js';
import type { Catalog } from './catalog.js';
import { HanaCatalog } from './hana-catalog.js';
import { MysqlCatalog } from './mysql-catalog.js';
import { PostgresCatalog } from './postgres-catalog.js';
import { SqliteCatalog } from './sqlite-catalog.js';

/** One stateless catalog per engine: the only place the engine decides which one serves a call. */
export const CATALOGS: Readonly<Record<Engine, Catalog>> = {
  sqlite: new SqliteCatalog(),
  postgres: new PostgresCatalog(),
  mysql: new MysqlCatalog(),
  hana: new HanaCatalog(),
};
