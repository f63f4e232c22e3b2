import type { ExplainResult, ObjectKind, RoutineList, SearchResult, TableList } from '../../../shared/catalog-schemas.js';
import type { BoundStatement, Catalog, CatalogExecutor, ListQuery, TableRef } from '../../catalog/catalog.js';
import { binder, capInfo, LIKE_ESCAPE, likePattern, name, num, quoteWith, text } from '../../catalog/catalog-sql.js';
import { runSearch, type SearchBranches, searchColumns } from '../../catalog/search-sql.js';
import { describeSqliteTable } from './sqlite-describe.js';

/** User tables and views of every attached schema (SQLite's own tables and shadow tables left out). */
const TABLES = `pragma_table_list t WHERE t.type IN ('table', 'view', 'virtual') AND t.name NOT LIKE 'sqlite!_%' ${LIKE_ESCAPE}`;

/**
 * SQLite from its table-valued pragmas (`pragma_table_list`, `pragma_table_xinfo`, ...), which
 * take names as bound arguments. SQLite keeps no row-count estimate, no comments and no stored
 * routines: those answers are null or empty, and `list_routines` says so.
 */
export class SqliteCatalog implements Catalog {
  readonly engine = 'sqlite' as const;
  readonly explainWrites = false;
  readonly quoteIdentifier = quoteWith('"');

  async currentSchema(): Promise<string> {
    return 'main';
  }

  async listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }) {
    const b = binder('question');
    const filter = query.pattern ? ` WHERE LOWER(name) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(`SELECT name, COUNT(*) OVER () AS total FROM pragma_database_list${filter} ORDER BY seq`, b.params, query.limit);
    return { schemas: rows.map((r) => name(r, 'name')), ...capInfo(rows, 'total') };
  }

  async listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList> {
    const b = binder('question');
    const schema = b.bind(query.schema);
    const filter = query.pattern ? ` AND LOWER(t.name) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT t.name AS name, t.type AS kind, COUNT(*) OVER () AS total FROM ${TABLES} AND t.schema = ${schema}${filter} ORDER BY t.name`,
      b.params,
      query.limit,
    );
    const tables = rows.map((r) => ({ name: name(r, 'name'), kind: name(r, 'kind'), rowEstimate: null, comment: null }));
    return { schema: query.schema, tables, ...capInfo(rows, 'total') };
  }

  async findTables(run: CatalogExecutor, schema: string, table: string): Promise<TableRef[]> {
    const rows = await run(
      `SELECT t.schema AS schema_name, t.name AS name, t.type AS kind FROM ${TABLES} AND LOWER(t.schema) = LOWER(?) AND LOWER(t.name) = LOWER(?)`,
      [schema, table],
      20,
    );
    return rows.map((r) => ({ schema: name(r, 'schema_name'), table: name(r, 'name'), kind: name(r, 'kind'), comment: null }));
  }

  describeTable(run: CatalogExecutor, table: TableRef) {
    return describeSqliteTable(run, table);
  }

  async listRoutines(_run: CatalogExecutor, query: ListQuery): Promise<RoutineList> {
    return { schema: query.schema, routines: [], total: 0, truncated: false, note: 'SQLite has no stored procedures or functions.' };
  }

  async search(run: CatalogExecutor, query: { pattern: string; kinds: readonly ObjectKind[]; limit: number }): Promise<SearchResult> {
    const b = binder('question');
    const like = (column: string) => `LOWER(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}`;
    const branches: SearchBranches = {
      table: (l) =>
        `SELECT ${searchColumns(l, "'table'", 't.schema', 't.name', 'NULL', 'NULL')} FROM ${TABLES} AND t.type <> 'view' AND ${like('t.name')}`,
      view: (l) =>
        `SELECT ${searchColumns(l, "'view'", 't.schema', 't.name', 'NULL', 'NULL')} FROM ${TABLES} AND t.type = 'view' AND ${like('t.name')}`,
      column: (l) =>
        `SELECT ${searchColumns(l, "'column'", 't.schema', 'c.name', 't.name', 'c.type')}
         FROM pragma_table_list t JOIN pragma_table_info(t.name, t.schema) c
         WHERE t.type IN ('table', 'view', 'virtual') AND t.name NOT LIKE 'sqlite!_%' ${LIKE_ESCAPE} AND ${like('c.name')}`,
    };
    return runSearch(run, branches, b, query);
  }

  sampleStatement(table: TableRef, limit: number): BoundStatement {
    return { sql: `SELECT * FROM ${this.quoteIdentifier(table.schema)}.${this.quoteIdentifier(table.table)} LIMIT ?`, params: [limit] };
  }

  /** `EXPLAIN QUERY PLAN`: rows of (id, parent, detail), shown as an indented tree. */
  /** EXPLAIN QUERY PLAN gives the plan's shape only: no row estimate or cost to leave out. */
  readonly planShape = true;

  async explain(run: CatalogExecutor, sql: string): Promise<ExplainResult> {
    const rows = await run(`EXPLAIN QUERY PLAN ${sql}`, [], 1000);
    const depth = new Map<number, number>([[0, -1]]);
    const lines = rows.map((r) => {
      const level = (depth.get(num(r, 'parent') ?? 0) ?? -1) + 1;
      depth.set(num(r, 'id') ?? 0, level);
      return `${'  '.repeat(level)}${level > 0 ? '-> ' : ''}${text(r, 'detail') ?? ''}`;
    });
    const plan = rows.map((r) => ({ id: num(r, 'id'), parent: num(r, 'parent'), detail: text(r, 'detail') }));
    return { engine: this.engine, text: lines.join('\n'), plan };
  }
}
