export type { BoundStatement, Catalog, CatalogExecutor, CatalogRow, ListQuery, TableRef } from './catalog.js';
export { CatalogService, type CatalogServiceDeps, type StatementValidator, type StatementVerdict } from './catalog-service.js';
export { CATALOGS } from './catalogs.js';
export { HanaCatalog } from './hana-catalog.js';
export { MysqlCatalog } from './mysql-catalog.js';
export { PostgresCatalog } from './postgres-catalog.js';
export { SqliteCatalog } from './sqlite-catalog.js';
export { type LeasedWriteScopeDeps, leasedWriteScope, type WriteScope } from './write-scope.js';
