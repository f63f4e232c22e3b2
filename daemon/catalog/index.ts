export { HanaCatalog } from '../engines/hana/hana-catalog.js';
export { MysqlCatalog } from '../engines/mysql/mysql-catalog.js';
export { PostgresCatalog } from '../engines/postgres/postgres-catalog.js';
export { SqliteCatalog } from '../engines/sqlite/sqlite-catalog.js';
export type { BoundStatement, Catalog, CatalogExecutor, CatalogRow, ListQuery, TableRef } from './catalog.js';
export { CatalogService, type CatalogServiceDeps, type StatementValidator, type StatementVerdict } from './catalog-service.js';
