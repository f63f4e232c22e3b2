import type { ExplainResult, ObjectKind, RoutineList, SearchResult, TableList } from '../../../shared/catalog-schemas.js';
import type { BoundStatement, Catalog, CatalogExecutor, ListQuery, TableRef } from '../../catalog/catalog.js';
import { binder, capInfo, likePattern, name, num, quoteWith, text } from '../../catalog/catalog-sql.js';
import { runSearch, type SearchBranches, type SearchWords, searchColumns } from '../../catalog/search-sql.js';
import { describedAs, describePostgresTable } from './postgres-describe.js';
import { postgresPlanText, withoutFigures } from './postgres-plan.js';
import { postgresRefusedRead } from './postgres-reads.js';

/*
 * Every function, operator, type and collation these statements name is pg_catalog's, and no
 * keyword form that finds an operator by its symbol is used (IN, LIKE, CASE x WHEN): the login's
 * search_path may name a schema before pg_catalog (`public, pg_catalog`), whose objects of the
 * same name would otherwise be the ones called, with hanactl's statement, outside every check.
 */

/** `column` is one of the relkinds listed (`'rpvmf'`). */
const relkindIn = (column: string, kinds: string) =>
  `${column} OPERATOR(pg_catalog.=) ANY ('{${[...kinds].join(',')}}'::pg_catalog."char"[])`;
const relkindIs = (kind: string) => `c.relkind OPERATOR(pg_catalog.=) '${kind}'`;
const KIND = `CASE WHEN ${relkindIs('v')} THEN 'view' WHEN ${relkindIs('m')} THEN 'materialized view' WHEN ${relkindIs('f')} THEN 'foreign table' ELSE 'table' END`;
const ROUTINE_KIND = `CASE WHEN p.prokind OPERATOR(pg_catalog.=) 'p' THEN 'procedure' WHEN p.prokind OPERATOR(pg_catalog.=) 'a' THEN 'aggregate'
           WHEN p.prokind OPERATOR(pg_catalog.=) 'w' THEN 'window' ELSE 'function' END`;
/** Schemas an agent never needs to see unless it names them. */
const USER_SCHEMA = `n.nspname OPERATOR(pg_catalog.!~) '^pg_' AND n.nspname OPERATOR(pg_catalog.<>) 'information_schema' AND pg_catalog.has_schema_privilege(n.oid, 'USAGE')`;
const RELKINDS = `${relkindIn('c.relkind', 'rpvmf')} AND NOT c.relispartition`;
const RELATIONS = 'pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace';
const TOTAL = 'pg_catalog.count(*) OVER () AS total';
/** The comment on relation c, as obj_description reads it (which before PostgreSQL 14 compares by name on the search_path). */
const COMMENT = describedAs('c.oid', '0');
/** `column` lower-cased matches the agent's bound LIKE pattern (likePattern), `!` its escape. */
/** search_objects' ranking and count in pg_catalog's names (search-sql.ts). */
const PINNED_SEARCH: SearchWords = {
  order: `CASE WHEN kind OPERATOR(pg_catalog.=) 'table' THEN 1 WHEN kind OPERATOR(pg_catalog.=) 'view' THEN 2 WHEN kind OPERATOR(pg_catalog.=) 'routine' THEN 3 ELSE 4 END`,
  count: 'pg_catalog.count(*)',
};
const likeBound = (column: string, pattern: string) =>
  `pg_catalog.lower(${column}) OPERATOR(pg_catalog.~~) pg_catalog.like_escape(${pattern}::pg_catalog.text, '!')`;

/** PostgreSQL from pg_catalog (cheaper and more complete than information_schema). */
export class PostgresCatalog implements Catalog {
  readonly engine = 'postgres' as const;
  readonly explainWrites = false;
  readonly quoteIdentifier = quoteWith('"');

  async currentSchema(run: CatalogExecutor): Promise<string | null> {
    const [row] = await run('SELECT pg_catalog.current_schema() AS name', [], 1);
    return row ? text(row, 'name') : null;
  }

  async listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }) {
    const b = binder('dollar');
    const filter = query.pattern ? ` AND ${likeBound('n.nspname', b.bind(likePattern(query.pattern)))}` : '';
    const rows = await run(
      `SELECT n.nspname AS name, ${TOTAL} FROM pg_catalog.pg_namespace n WHERE ${USER_SCHEMA}${filter} ORDER BY n.nspname`,
      b.params,
      query.limit,
    );
    return { schemas: rows.map((r) => name(r, 'name')), ...capInfo(rows, 'total') };
  }

  async listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList> {
    const b = binder('dollar');
    const schema = b.bind(query.schema);
    const filter = query.pattern ? ` AND ${likeBound('c.relname', b.bind(likePattern(query.pattern)))}` : '';
    const rows = await run(
      `SELECT c.relname AS name, ${KIND} AS kind,
         CASE WHEN ${relkindIn('c.relkind', 'rm')} AND c.reltuples OPERATOR(pg_catalog.>=) 0 THEN c.reltuples::bigint END AS row_estimate,
         ${COMMENT} AS comment, ${TOTAL}
       FROM ${RELATIONS} WHERE n.nspname OPERATOR(pg_catalog.=) ${schema} AND ${RELKINDS}${filter} ORDER BY c.relname`,
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
      `SELECT n.nspname AS schema_name, c.relname AS name, ${KIND} AS kind, ${COMMENT} AS comment, c.oid::bigint AS oid
       FROM ${RELATIONS}
       WHERE pg_catalog.lower(n.nspname) OPERATOR(pg_catalog.=) pg_catalog.lower($1::pg_catalog.text)
         AND pg_catalog.lower(c.relname) OPERATOR(pg_catalog.=) pg_catalog.lower($2::pg_catalog.text) AND ${relkindIn('c.relkind', 'rpvmf')}`,
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
    const filter = query.pattern ? ` AND ${likeBound('p.proname', b.bind(likePattern(query.pattern)))}` : '';
    const rows = await run(
      `SELECT p.proname AS name,
         ${ROUTINE_KIND} AS kind,
         pg_catalog.pg_get_function_identity_arguments(p.oid) AS arguments, pg_catalog.pg_get_function_result(p.oid) AS returns, ${TOTAL}
       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace
       WHERE n.nspname OPERATOR(pg_catalog.=) ${schema}${filter} ORDER BY p.proname, 3`,
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
    const like = (column: string) => likeBound(column, b.bind(likePattern(query.pattern)));
    const relation = (kinds: string) => `${USER_SCHEMA} AND ${relkindIn('c.relkind', kinds)} AND NOT c.relispartition`;
    const branches: SearchBranches = {
      table: (l) =>
        `SELECT ${searchColumns(l, "'table'", 'n.nspname', 'c.relname', 'NULL', 'NULL')} FROM ${RELATIONS} WHERE ${relation('rpf')} AND ${like('c.relname')}`,
      view: (l) =>
        `SELECT ${searchColumns(l, "'view'", 'n.nspname', 'c.relname', 'NULL', 'NULL')} FROM ${RELATIONS} WHERE ${relation('vm')} AND ${like('c.relname')}`,
      routine: (l) =>
        `SELECT ${searchColumns(l, "'routine'", 'n.nspname', 'p.proname', 'NULL', "CASE WHEN p.prokind OPERATOR(pg_catalog.=) 'p' THEN 'procedure' ELSE 'function' END")}
         FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) p.pronamespace WHERE ${USER_SCHEMA} AND ${like('p.proname')}`,
      column: (l) =>
        `SELECT ${searchColumns(l, "'column'", 'n.nspname', 'a.attname', 'c.relname', 'pg_catalog.format_type(a.atttypid, a.atttypmod)')}
         FROM pg_catalog.pg_attribute a JOIN ${RELATIONS} ON c.oid OPERATOR(pg_catalog.=) a.attrelid
         WHERE ${relation('rpvmf')} AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped AND ${like('a.attname')}`,
    };
    return runSearch(run, branches, b, query, undefined, PINNED_SEARCH);
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
