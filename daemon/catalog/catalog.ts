import type {
  ExplainResult,
  ObjectKind,
  RoutineList,
  SchemaList,
  SearchResult,
  TableDescription,
  TableList,
} from '../../shared/catalog-schemas.js';
import type { Engine } from '../../shared/connection-url.js';
import type { Param } from '../../shared/schemas.js';

/** One row of a catalog statement, keyed by column label as the engine returns it. */
export type CatalogRow = Readonly<Record<string, unknown>>;

/**
 * Runs one statement the catalog generated and returns at most `maxRows` rows. The caller
 * decides where: the read-only, rolled-back path of `QueryService.runTrusted`; for `explain`,
 * whose statement holds the agent's text, `QueryService.checkedRead` (checked and resolved as
 * run_query's, and on one borrowed connection for a catalog whose `explainWrites` is true).
 */
export type CatalogExecutor = (sql: string, params: readonly Param[], maxRows: number) => Promise<CatalogRow[]>;

/** A list request after defaults: an exact schema name, an optional agent pattern, a row cap. */
export interface ListQuery {
  readonly schema: string;
  readonly pattern?: string;
  readonly limit: number;
}

/** A table or view the catalog has proven to exist, with its names as the catalog spells them. */
export interface TableRef {
  readonly schema: string;
  readonly table: string;
  readonly kind: string;
  readonly comment: string | null;
  /** Engine-private handle for follow-up queries (PostgreSQL: the relation's oid). */
  readonly handle?: number | string;
}

/** One generated statement with its bound parameters. */
export interface BoundStatement {
  readonly sql: string;
  readonly params: readonly Param[];
}

/**
 * Schema discovery for one engine. Implementations only generate SQL and map rows: every
 * agent-supplied name or pattern is bound as a parameter, every identifier placed in SQL
 * text comes from the catalog itself and goes through `quoteIdentifier`. They hold no state
 * and open no connection; `run` is given per call. Statements run one after another, never in
 * parallel, so one call holds at most one pooled connection (a SQLite connection is a process).
 */
export interface Catalog {
  readonly engine: Engine;
  /**
   * True when `explain` must write: SAP HANA's `EXPLAIN PLAN` stores its result in
   * EXPLAIN_PLAN_TABLE, read back and deleted by the next statements. Such a catalog's
   * `explain` is then given an executor whose statements run on one connection and may
   * write (autocommit); every other catalog explains on the read-only path.
   */
  readonly explainWrites: boolean;
  /** Quotes one identifier for this dialect (embedded quotes doubled). */
  quoteIdentifier(name: string): string;
  /** The schema unqualified names resolve in, or null when there is none. */
  currentSchema(run: CatalogExecutor): Promise<string | null>;
  listSchemas(run: CatalogExecutor, query: { pattern?: string; limit: number }): Promise<Omit<SchemaList, 'current'>>;
  listTables(run: CatalogExecutor, query: ListQuery): Promise<TableList>;
  /** The tables and views whose schema and name equal these ignoring case (at most a few rows). */
  findTables(run: CatalogExecutor, schema: string, table: string): Promise<TableRef[]>;
  describeTable(run: CatalogExecutor, table: TableRef): Promise<TableDescription>;
  listRoutines(run: CatalogExecutor, query: ListQuery): Promise<RoutineList>;
  search(run: CatalogExecutor, query: { pattern: string; kinds: readonly ObjectKind[]; limit: number }): Promise<SearchResult>;
  /**
   * A system relation whose rows the statement policy refuses (credentials, statistics, server
   * files) that the proven `table` is or reads through its views, found by identity rather than
   * by name, qualified so the policy can judge `SELECT * FROM` it; undefined when there is none.
   * Catalogs without it rely on the policy's check of `sampleStatement` alone. With `separated`
   * (the connection separates rows by context values) it also throws the refusals that apply only
   * there (a person's view over the executor's statistics, one that reads a table under row
   * security with its owner's rights).
   */
  refusedRead?(run: CatalogExecutor, table: TableRef, separated?: boolean): Promise<string | undefined>;
  /** `SELECT *` of a proven table with its identifiers quoted, the row limit bound. */
  sampleStatement(table: TableRef, limit: number): BoundStatement;
  /**
   * The plan of `sql` (already validated as one read, trailing `;` removed), never running it.
   * `figures: false`: without row estimates or costs (the connection separates rows, and those
   * figures count the hidden ones); a catalog that cannot leave them out has no `planShape`.
   */
  explain(run: CatalogExecutor, sql: string, options?: { readonly figures?: boolean }): Promise<ExplainResult>;
  /** True when `explain` can leave the planner's figures out (PostgreSQL `COSTS OFF`; SQLite has none). */
  readonly planShape?: boolean;
}
