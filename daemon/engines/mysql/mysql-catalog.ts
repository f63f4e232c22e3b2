import type { ExplainResult, ObjectKind, RoutineList, SearchResult, TableList } from '../../../shared/catalog-schemas.js';
import type { BoundStatement, Catalog, CatalogExecutor, ListQuery, TableRef } from '../../catalog/catalog.js';
import { binder, capInfo, LIKE_ESCAPE, likePattern, name, num, quoteWith, text } from '../../catalog/catalog-sql.js';
import { runSearch, type SearchBranches, searchColumns } from '../../catalog/search-sql.js';
import { describeMysqlTable, sameName } from './mysql-describe.js';
import { mysqlPlanText } from './mysql-plan.js';

const SYSTEM_SCHEMAS = `('information_schema', 'mysql', 'performance_schema', 'sys')`;

/** MySQL 8 and MariaDB 10.2+ (window functions) from information_schema. */
export class MysqlCatalog implements Catalog {
  readonly engine = 'mysql' as const;
  readonly explainWrites = false;
  readonly quoteIdentifier = quoteWith('`');

  async currentSchema(run: CatalogExecutor): Promise<string | null> {
    const [row] = await run('SELECT DATABASE() AS name', [], 1);
    return row ? text(row, 'name') : null;
  }

  async listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }) {
    const b = binder('question');
    const filter = query.pattern ? ` AND LOWER(SCHEMA_NAME) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT SCHEMA_NAME AS name, COUNT(*) OVER () AS total FROM information_schema.SCHEMATA
       WHERE SCHEMA_NAME NOT IN ${SYSTEM_SCHEMAS}${filter} ORDER BY SCHEMA_NAME`,
      b.params,
      query.limit,
    );
    return { schemas: rows.map((r) => name(r, 'name')), ...capInfo(rows, 'total') };
  }

  async listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList> {
    const b = binder('question');
    const schema = sameName(b, 'TABLE_SCHEMA', query.schema);
    const filter = query.pattern ? ` AND LOWER(TABLE_NAME) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT TABLE_NAME AS name, TABLE_TYPE AS kind, TABLE_ROWS AS row_estimate, TABLE_COMMENT AS comment, COUNT(*) OVER () AS total
       FROM information_schema.TABLES WHERE ${schema}${filter} ORDER BY TABLE_NAME`,
      b.params,
      query.limit,
    );
    const tables = rows.map((r) => {
      const kind = tableKind(text(r, 'kind'));
      return {
        name: name(r, 'name'),
        kind,
        rowEstimate: kind === 'view' ? null : num(r, 'row_estimate'),
        comment: kind === 'view' ? null : text(r, 'comment') || null,
      };
    });
    return { schema: query.schema, tables, ...capInfo(rows, 'total') };
  }

  /**
   * The exact name first (a lookup the server answers without scanning); only when that finds
   * nothing, names equal ignoring case (MariaDB resolves `TABLE_NAME = ?` through the file
   * system, which is case-sensitive on Linux).
   */
  async findTables(run: CatalogExecutor, schema: string, table: string): Promise<TableRef[]> {
    const select = `SELECT TABLE_SCHEMA AS schema_name, TABLE_NAME AS name, TABLE_TYPE AS kind, TABLE_COMMENT AS comment FROM information_schema.TABLES`;
    let rows = await run(`${select} WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, [schema, table], 20);
    if (rows.length === 0) {
      rows = await run(`${select} WHERE LOWER(TABLE_SCHEMA) = LOWER(?) AND LOWER(TABLE_NAME) = LOWER(?)`, [schema, table], 20);
    }
    return rows.map((r) => {
      const kind = tableKind(text(r, 'kind'));
      return { schema: name(r, 'schema_name'), table: name(r, 'name'), kind, comment: kind === 'view' ? null : text(r, 'comment') || null };
    });
  }

  describeTable(run: CatalogExecutor, table: TableRef) {
    return describeMysqlTable(run, table);
  }

  async listRoutines(run: CatalogExecutor, query: ListQuery): Promise<RoutineList> {
    const b = binder('question');
    const schema = sameName(b, 'r.ROUTINE_SCHEMA', query.schema);
    const filter = query.pattern ? ` AND LOWER(r.ROUTINE_NAME) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT r.ROUTINE_NAME AS name, LOWER(r.ROUTINE_TYPE) AS kind, r.DTD_IDENTIFIER AS returns,
         (SELECT GROUP_CONCAT(CONCAT_WS(' ', IF(r.ROUTINE_TYPE = 'PROCEDURE', p.PARAMETER_MODE, NULL), p.PARAMETER_NAME, p.DTD_IDENTIFIER)
                 ORDER BY p.ORDINAL_POSITION SEPARATOR ', ')
            FROM information_schema.PARAMETERS p
           WHERE p.SPECIFIC_SCHEMA = r.ROUTINE_SCHEMA AND p.SPECIFIC_NAME = r.SPECIFIC_NAME AND p.ROUTINE_TYPE = r.ROUTINE_TYPE AND p.ORDINAL_POSITION > 0) AS arguments,
         COUNT(*) OVER () AS total
       FROM information_schema.ROUTINES r WHERE ${schema}${filter} ORDER BY r.ROUTINE_NAME`,
      b.params,
      query.limit,
    );
    const routines = rows.map((r) => ({
      name: name(r, 'name'),
      kind: name(r, 'kind'),
      arguments: text(r, 'arguments') ?? '',
      returns: text(r, 'returns'),
    }));
    return { schema: query.schema, routines, ...capInfo(rows, 'total') };
  }

  async search(run: CatalogExecutor, query: { pattern: string; kinds: readonly ObjectKind[]; limit: number }): Promise<SearchResult> {
    const b = binder('question');
    const like = (column: string) => `LOWER(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}`;
    const user = (column: string) => `${column} NOT IN ${SYSTEM_SCHEMAS}`;
    const branches: SearchBranches = {
      table: (l) =>
        `SELECT ${searchColumns(l, "'table'", 'TABLE_SCHEMA', 'TABLE_NAME', 'NULL', 'NULL')} FROM information_schema.TABLES
         WHERE ${user('TABLE_SCHEMA')} AND TABLE_TYPE NOT IN ('VIEW', 'SYSTEM VIEW') AND ${like('TABLE_NAME')}`,
      view: (l) =>
        `SELECT ${searchColumns(l, "'view'", 'TABLE_SCHEMA', 'TABLE_NAME', 'NULL', 'NULL')} FROM information_schema.TABLES
         WHERE ${user('TABLE_SCHEMA')} AND TABLE_TYPE IN ('VIEW', 'SYSTEM VIEW') AND ${like('TABLE_NAME')}`,
      routine: (l) =>
        `SELECT ${searchColumns(l, "'routine'", 'ROUTINE_SCHEMA', 'ROUTINE_NAME', 'NULL', 'LOWER(ROUTINE_TYPE)')} FROM information_schema.ROUTINES
         WHERE ${user('ROUTINE_SCHEMA')} AND ${like('ROUTINE_NAME')}`,
      column: (l) =>
        `SELECT ${searchColumns(l, "'column'", 'TABLE_SCHEMA', 'COLUMN_NAME', 'TABLE_NAME', 'COLUMN_TYPE')} FROM information_schema.COLUMNS
         WHERE ${user('TABLE_SCHEMA')} AND ${like('COLUMN_NAME')}`,
    };
    return runSearch(run, branches, b, query);
  }

  sampleStatement(table: TableRef, limit: number): BoundStatement {
    return { sql: `SELECT * FROM ${this.quoteIdentifier(table.schema)}.${this.quoteIdentifier(table.table)} LIMIT ?`, params: [limit] };
  }

  /** `EXPLAIN FORMAT=JSON`: the optimizer's plan; the statement is not run. */
  async explain(run: CatalogExecutor, sql: string): Promise<ExplainResult> {
    const [row] = await run(`EXPLAIN FORMAT=JSON ${sql}`, [], 1);
    const raw = row ? Object.values(row)[0] : null;
    let plan: unknown = raw;
    if (typeof raw === 'string') {
      try {
        plan = JSON.parse(raw);
      } catch {
        plan = raw;
      }
    }
    return { engine: this.engine, text: mysqlPlanText(plan), plan };
  }
}

/** information_schema's TABLE_TYPE in the catalog's words. */
function tableKind(type: string | null): string {
  if (type === 'VIEW' || type === 'SYSTEM VIEW') return 'view';
  if (type === 'SEQUENCE') return 'sequence';
  return 'table';
}
