import { randomBytes } from 'node:crypto';
import type { ExplainResult, ObjectKind, RoutineList, SearchResult, TableList } from '../../../shared/catalog-schemas.js';
import type { BoundStatement, Catalog, CatalogExecutor, CatalogRow, ListQuery, TableRef } from '../../catalog/catalog.js';
import { binder, capInfo, LIKE_ESCAPE, likePattern, name, num, quoteWith, text } from '../../catalog/catalog-sql.js';
import { runSearch } from '../../catalog/search-sql.js';
import { HANA_ROUTINES_SQL, hanaSearchBranches } from './hana-catalog-sql.js';
import { describeHanaTable } from './hana-describe.js';
import { hanaPlanText } from './hana-plan.js';

/** Schemas an agent may query, without the system's own (`SYS`, `_SYS_*`). */
const USER_SCHEMA = (column: string) => `${column} <> 'SYS' AND ${column} NOT LIKE '!_SYS!_%' ${LIKE_ESCAPE}`;

/** HANA answers unquoted labels in upper case; the shared search mapping reads lower case. */
const lowerKeys = (row: CatalogRow): CatalogRow => Object.fromEntries(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * SAP HANA from the SYS catalog views (TABLES, VIEWS, TABLE_COLUMNS, CONSTRAINTS,
 * REFERENTIAL_CONSTRAINTS, INDEXES, PROCEDURES, FUNCTIONS) and `M_TABLES.RECORD_COUNT` for
 * row counts. Table types (`IS_USER_DEFINED_TYPE`) live in SYS.TABLES too and are left out.
 * Unquoted HANA names are upper case, so a table is also looked up by `UPPER(name)`.
 * Explain writes (see `explainWrites`).
 */
export class HanaCatalog implements Catalog {
  readonly engine = 'hana' as const;
  readonly explainWrites = true;
  readonly quoteIdentifier = quoteWith('"');
  /** Names each explained statement's rows in EXPLAIN_PLAN_TABLE; injectable for tests. */
  readonly #statementName: () => string;

  constructor(options: { statementName?: () => string } = {}) {
    this.#statementName = options.statementName ?? (() => `HANACTL_${randomBytes(8).toString('hex').toUpperCase()}`);
  }

  async currentSchema(run: CatalogExecutor): Promise<string | null> {
    const [row] = await run('SELECT CURRENT_SCHEMA AS SCHEMA_NAME FROM DUMMY', [], 1);
    return row ? text(row, 'SCHEMA_NAME') : null;
  }

  async listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }) {
    const b = binder('question');
    const filter = query.pattern ? ` AND LOWER(SCHEMA_NAME) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT SCHEMA_NAME, COUNT(*) OVER () AS TOTAL FROM SYS.SCHEMAS WHERE HAS_PRIVILEGES = 'TRUE' AND ${USER_SCHEMA('SCHEMA_NAME')}${filter} ORDER BY SCHEMA_NAME`,
      b.params,
      query.limit,
    );
    return { schemas: rows.map((r) => name(r, 'SCHEMA_NAME')), ...capInfo(rows, 'TOTAL') };
  }

  async listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList> {
    const b = binder('question');
    const like = (column: string) =>
      query.pattern ? ` AND LOWER(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      `SELECT OBJECT_NAME, OBJECT_KIND, RECORD_COUNT, COMMENTS, COUNT(*) OVER () AS TOTAL FROM (
         SELECT t.TABLE_NAME AS OBJECT_NAME, 'table' AS OBJECT_KIND, m.RECORD_COUNT, t.COMMENTS
           FROM SYS.TABLES t LEFT JOIN SYS.M_TABLES m ON m.SCHEMA_NAME = t.SCHEMA_NAME AND m.TABLE_NAME = t.TABLE_NAME
          WHERE t.SCHEMA_NAME = ${b.bind(query.schema)} AND t.IS_USER_DEFINED_TYPE = 'FALSE'${like('t.TABLE_NAME')}
         UNION ALL
         SELECT v.VIEW_NAME, 'view', NULL, v.COMMENTS FROM SYS.VIEWS v WHERE v.SCHEMA_NAME = ${b.bind(query.schema)}${like('v.VIEW_NAME')}
       ) ORDER BY OBJECT_NAME`,
      b.params,
      query.limit,
    );
    const tables = rows.map((r) => ({
      name: name(r, 'OBJECT_NAME'),
      kind: name(r, 'OBJECT_KIND'),
      rowEstimate: num(r, 'RECORD_COUNT'),
      comment: text(r, 'COMMENTS'),
    }));
    return { schema: query.schema, tables, ...capInfo(rows, 'TOTAL') };
  }

  /**
   * Exact names or their upper-case form (what an unquoted name becomes in HANA), which the
   * catalog answers by key; only when that finds nothing, names equal ignoring case within the
   * schema.
   */
  async findTables(run: CatalogExecutor, schema: string, table: string): Promise<TableRef[]> {
    const lookup = (tableMatch: (column: string) => string) =>
      `SELECT SCHEMA_NAME, TABLE_NAME AS OBJECT_NAME, 'table' AS OBJECT_KIND, COMMENTS FROM SYS.TABLES
        WHERE SCHEMA_NAME IN (?, UPPER(?)) AND IS_USER_DEFINED_TYPE = 'FALSE' AND ${tableMatch('TABLE_NAME')}
       UNION ALL
       SELECT SCHEMA_NAME, VIEW_NAME, 'view', COMMENTS FROM SYS.VIEWS
        WHERE SCHEMA_NAME IN (?, UPPER(?)) AND ${tableMatch('VIEW_NAME')}`;
    let rows = await run(
      lookup((c) => `${c} IN (?, UPPER(?))`),
      [schema, schema, table, table, schema, schema, table, table],
      20,
    );
    if (rows.length === 0)
      rows = await run(
        lookup((c) => `LOWER(${c}) = LOWER(?)`),
        [schema, schema, table, schema, schema, table],
        20,
      );
    return rows.map((r) => ({
      schema: name(r, 'SCHEMA_NAME'),
      table: name(r, 'OBJECT_NAME'),
      kind: name(r, 'OBJECT_KIND'),
      comment: text(r, 'COMMENTS'),
    }));
  }

  describeTable(run: CatalogExecutor, table: TableRef) {
    return describeHanaTable(run, table);
  }

  async listRoutines(run: CatalogExecutor, query: ListQuery): Promise<RoutineList> {
    const b = binder('question');
    const like = (column: string) =>
      query.pattern ? ` AND LOWER(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}` : '';
    const rows = await run(
      HANA_ROUTINES_SQL(b.bind(query.schema), like('p.PROCEDURE_NAME'), b.bind(query.schema), like('f.FUNCTION_NAME')),
      b.params,
      query.limit,
    );
    const routines = rows.map((r) => ({
      name: name(r, 'OBJECT_NAME'),
      kind: name(r, 'OBJECT_KIND'),
      arguments: text(r, 'ARGUMENTS') ?? '',
      returns: text(r, 'RETURNS'),
    }));
    return { schema: query.schema, routines, ...capInfo(rows, 'TOTAL') };
  }

  async search(run: CatalogExecutor, query: { pattern: string; kinds: readonly ObjectKind[]; limit: number }): Promise<SearchResult> {
    const b = binder('question');
    const like = (column: string) =>
      `${USER_SCHEMA('SCHEMA_NAME')} AND LOWER(${column}) LIKE ${b.bind(likePattern(query.pattern))} ${LIKE_ESCAPE}`;
    return runSearch(run, hanaSearchBranches(like), b, query, lowerKeys);
  }

  sampleStatement(table: TableRef, limit: number): BoundStatement {
    return { sql: `SELECT * FROM ${this.quoteIdentifier(table.schema)}.${this.quoteIdentifier(table.table)} LIMIT ?`, params: [limit] };
  }

  /**
   * `EXPLAIN PLAN SET STATEMENT_NAME = '<generated>' FOR <sql>` stores the plan in
   * EXPLAIN_PLAN_TABLE; the rows are read back and deleted, also when reading fails. `run` must
   * keep all three on one connection with writes allowed (the service's write scope). The name
   * is a string literal in HANA's grammar and is generated here (letters, digits, `_`), never
   * taken from the agent.
   */
  async explain(run: CatalogExecutor, sql: string): Promise<ExplainResult> {
    const statementName = this.#statementName();
    if (!/^[A-Z0-9_]{1,64}$/.test(statementName)) throw new Error('A plan statement name must be letters, digits and _.');
    await run(`EXPLAIN PLAN SET STATEMENT_NAME = '${statementName}' FOR ${sql}`, [], 0);
    try {
      const rows = await run(
        `SELECT OPERATOR_ID, PARENT_OPERATOR_ID, "LEVEL", OPERATOR_NAME, OPERATOR_DETAILS, SCHEMA_NAME, TABLE_NAME,
                EXECUTION_ENGINE, OUTPUT_SIZE, SUBTREE_COST
           FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ? ORDER BY OPERATOR_ID`,
        [statementName],
        1000,
      );
      return { engine: this.engine, text: hanaPlanText(rows), plan: rows };
    } finally {
      await run('DELETE FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME = ?', [statementName], 0);
    }
  }
}
