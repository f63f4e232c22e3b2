export type { BoundStatement, Catalog, CatalogExecutor, CatalogRow, ListQuery, TableRef } from './catalog.js';
export { CatalogService, type CatalogServiceDeps, type StatementValidator, type StatementVerdict } from './catalog-service.js';
