import type { ExplainResult, ObjectKind, RoutineList, SearchResult, TableList } from '../../../shared/catalog-schemas.js';
import type { BoundStatement, Catalog, CatalogExecutor, ListQuery, TableRef } from '../../catalog/catalog.js';
import { binder, capInfo, LIKE_ESCAPE, likePattern, name, num, quoteWith, text } from '../../catalog/catalog-sql.js';
import { runSearch, type SearchBranches, searchColumns } from '../../catalog/search-sql.js';
import { describePostgresTable } from './postgres-describe.js';
import { postgresPlanText, withoutFigures } from './postgres-plan.js';
import { postgresRefusedRead } from './postgres-reads.js';

const KIND = `CASE c.relkind WHEN 'v' THEN 'view' WHEN 'm' THEN 'materialized view' WHEN 'f' THEN 'foreign table' ELSE 'table' END`;
/** Schemas an agent never needs to see unless it names them. */
const USER_SCHEMA = `n.nspname !~ '^pg_' AND n.nspname <> 'information_schema' AND has_schema_privilege(n.oid, 'USAGE')`;
const RELKINDS = `c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition`;
const RELATIONS = 'pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace';

/** PostgreSQL from pg_catalog (cheaper and more complete than information_schema). */
export class PostgresCatalog implements Catalog {
  readonly engine = 'postgres' as const;
  readonly explainWrites = false;
  readonly quoteIdentifier = quoteWith('"');

  async currentSchema(run: CatalogExecutor): Promise<string | null> {
    const [row] = await run('SELECT current_schema() AS name', [], 1);
    return row ? text(row, 'name') : null;
  }

  async listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }) {
    const b = binder('dollar');
    const filter = query.pattern ? ` AND lower(n.nspname) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT n.nspname AS name, COUNT(*) OVER () AS total FROM pg_catalog.pg_namespace n WHERE ${USER_SCHEMA}${filter} ORDER BY n.nspname`,
      b.params,
      query.limit,
    );
    return { schemas: rows.map((r) => name(r, 'name')), ...capInfo(rows, 'total') };
  }

  async listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList> {
    const b = binder('dollar');
    const schema = b.bind(query.schema);
    const filter = query.pattern ? ` AND lower(c.relname) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT c.relname AS name, ${KIND} AS kind,
         CASE WHEN c.relkind IN ('r', 'm') AND c.reltuples >= 0 THEN c.reltuples::bigint END AS row_estimate,
         obj_description(c.oid, 'pg_class') AS comment, COUNT(*) OVER () AS total
       FROM ${RELATIONS} WHERE n.nspname = ${schema} AND ${RELKINDS}${filter} ORDER BY c.relname`,
      b.params,
      query.limit,
    );
    const tables = rows.map((r) => ({
      name: name(r, 'name'),
      kind: name(r, 'kind'),
      rowEstimate: num(r, 'row_estimate'),
      comment: text(r, 'comment'),
    }));
    return { schema: query.schema, tables, ...capInfo(rows, 'total') };
  }

  async findTables(run: CatalogExecutor, schema: string, table: string): Promise<TableRef[]> {
    const rows = await run(
      `SELECT n.nspname AS schema_name, c.relname AS name, ${KIND} AS kind, obj_description(c.oid, 'pg_class') AS comment, c.oid::bigint AS oid
       FROM ${RELATIONS} WHERE lower(n.nspname) = lower($1) AND lower(c.relname) = lower($2) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`,
      [schema, table],
      20,
    );
    return rows.map((r) => ({
      schema: name(r, 'schema_name'),
      table: name(r, 'name'),
      kind: name(r, 'kind'),
      comment: text(r, 'comment'),
      handle: num(r, 'oid') ?? 0,
    }));
  }

  describeTable(run: CatalogExecutor, table: TableRef) {
    return describePostgresTable(run, table);
  }

  async listRoutines(run: CatalogExecutor, query: ListQuery): Promise<RoutineList> {
    const b = binder('dollar');
    const schema = b.bind(query.schema);
    const filter = query.pattern ? ` AND lower(p.proname) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT p.proname AS name,
         CASE p.prokind WHEN 'p' THEN 'procedure' WHEN 'a' THEN 'aggregate' WHEN 'w' THEN 'window' ELSE 'function' END AS kind,
         pg_get_function_identity_arguments(p.oid) AS arguments, pg_get_function_result(p.oid) AS returns, COUNT(*) OVER () AS total
       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = ${schema}${filter} ORDER BY p.proname, 3`,
      b.params,
      query.limit,
    );
    const routines = rows.map((r) => ({
      name: name(r, 'name'),
      kind: name(r, 'kind'),
      arguments: text(r, 'arguments'),
      returns: text(r, 'returns'),
    }));
    return { schema: query.schema, routines, ...capInfo(rows, 'total') };
  }

  async search(run: CatalogExecutor, query: { pattern: string; kinds: readonly ObjectKind[]; limit: number }): Promise<SearchResult> {
    const b = binder('dollar');
    const like = (column: string) => `lower(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}`;
    const relation = (kinds: string) => `${USER_SCHEMA} AND c.relkind IN (${kinds}) AND NOT c.relispartition`;
    const branches: SearchBranches = {
      table: (l) =>
        `SELECT ${searchColumns(l, "'table'", 'n.nspname', 'c.relname', 'NULL', 'NULL')} FROM ${RELATIONS} WHERE ${relation("'r', 'p', 'f'")} AND ${like('c.relname')}`,
      view: (l) =>
        `SELECT ${searchColumns(l, "'view'", 'n.nspname', 'c.relname', 'NULL', 'NULL')} FROM ${RELATIONS} WHERE ${relation("'v', 'm'")} AND ${like('c.relname')}`,
      routine: (l) =>
        `SELECT ${searchColumns(l, "'routine'", 'n.nspname', 'p.proname', 'NULL', "CASE p.prokind WHEN 'p' THEN 'procedure' ELSE 'function' END")}
         FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_SCHEMA} AND ${like('p.proname')}`,
      column: (l) =>
        `SELECT ${searchColumns(l, "'column'", 'n.nspname', 'a.attname', 'c.relname', 'format_type(a.atttypid, a.atttypmod)')}
         FROM pg_catalog.pg_attribute a JOIN ${RELATIONS} ON c.oid = a.attrelid
         WHERE ${relation("'r', 'p', 'v', 'm', 'f'")} AND a.attnum > 0 AND NOT a.attisdropped AND ${like('a.attname')}`,
    };
    return runSearch(run, branches, b, query);
  }

  async refusedRead(run: CatalogExecutor, table: TableRef, separated = false): Promise<string | undefined> {
    const refused = await postgresRefusedRead(run, table, separated);
    return refused === undefined ? undefined : `pg_catalog.${this.quoteIdentifier(refused)}`;
  }

  sampleStatement(table: TableRef, limit: number): BoundStatement {
    return { sql: `SELECT * FROM ${this.quoteIdentifier(table.schema)}.${this.quoteIdentifier(table.table)} LIMIT $1`, params: [limit] };
  }

  /** `EXPLAIN (FORMAT JSON)`, never ANALYZE: the statement is planned, not run. */
  readonly planShape = true;

  async explain(run: CatalogExecutor, sql: string, options?: { readonly figures?: boolean }): Promise<ExplainResult> {
    const figures = options?.figures !== false;
    const [row] = await run(`EXPLAIN (FORMAT JSON${figures ? '' : ', COSTS OFF'}) ${sql}`, [], 1);
    // Without figures twice over: the server leaves costs and rows out, and the answer keeps none.
    const plan = figures ? (row ? (Object.values(row)[0] ?? null) : null) : withoutFigures(row ? (Object.values(row)[0] ?? null) : null);
    return { engine: this.engine, text: postgresPlanText(plan), plan };
  }
}
