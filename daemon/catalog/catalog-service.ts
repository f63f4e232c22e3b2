import {
  DEFAULT_CATALOG_LIMIT,
  DEFAULT_SAMPLE_ROWS,
  type DescribeRequest,
  type ExplainRequest,
  type ExplainResult,
  ObjectKindSchema,
  type RoutineList,
  type RoutinesRequest,
  type SampleRequest,
  type SampleResult,
  type SchemaList,
  type SchemasRequest,
  type SearchRequest,
  type SearchResult,
  type TableDescription,
  type TableList,
  type TablesRequest,
} from '../../shared/catalog-schemas.js';
import type { Engine } from '../../shared/connection-url.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import { CATALOGS } from '../engines/index.js';
import type { CheckedExecutor, QueryService, StatementTarget } from '../queries/query-service.js';
import { capCatalogResult, capQueryResult, type ResultBudget, resultBudget } from '../queries/result-cap.js';
import type { Catalog, CatalogExecutor, TableRef } from './catalog.js';
import { withoutTrailingSemicolons } from './catalog-sql.js';

/** The read-only statement validator's answer, as `daemon/policy` gives it. */
export type StatementVerdict =
  | { readonly ok: true; readonly kind?: 'read' | 'write' }
  | { readonly ok: false; readonly rule: string; readonly message: string; readonly hint: string };

/**
 * Judges `sql` as a read on `engine` (the composition root passes `checkStatement` with `allowWrite:
 * false`); `rowSeparation` when the connection separates rows by context values, so the rules that
 * apply only there (planner figures, executor statistics) apply too.
 */
export type StatementValidator = (
  sql: string,
  engine: Engine,
  options?: { readonly rowSeparation?: boolean },
) => StatementVerdict | Promise<StatementVerdict>;

export interface CatalogServiceDeps {
  // separatesRows is required: without it explain_query could not know to leave the figures out.
  /** `checkedRead` is the only way text the agent chose (explain_query's, sample_rows' table) reaches the server. */
  readonly queries: Pick<QueryService, 'runTrusted' | 'checkedRead' | 'engineOf' | 'separatesRows'> &
    Partial<Pick<QueryService, 'budgetOf' | 'assertFreeAccess'>>;
  /** sample_rows judges what the sampled relation reads by identity (`refusedRead`) with this. */
  readonly validate: StatementValidator;
  /** One catalog per engine; defaults to `CATALOGS`. */
  readonly catalogs?: Readonly<Record<Engine, Catalog>>;
}

type Context = Readonly<Record<string, string>> | undefined;
/** One catalog call: its engine's catalog, where its statements run (connection, scope, signal), its context values. */
type Call = { catalog: Catalog; run: CatalogExecutor; target: StatementTarget; context: Context };
type Scoped = { connection: string; context?: Context; project?: string; session?: string };

/**
 * Schema discovery for one connection per call: picks the engine's catalog from a map, runs its
 * generated SQL through `QueryService.runTrusted` (read-only, rolled back), each statement
 * under the call's signal (a cancelled call stops on the server), applies defaults
 * (the connection's current schema, a row cap of 200), proves tables exist before use, and cuts
 * every answer to the connection's byte budget before it leaves the service.
 */
export class CatalogService {
  readonly #deps: CatalogServiceDeps;
  readonly #catalogs: Readonly<Record<Engine, Catalog>>;

  constructor(deps: CatalogServiceDeps) {
    this.#deps = deps;
    this.#catalogs = deps.catalogs ?? CATALOGS;
  }

  async schemas(req: SchemasRequest, signal?: AbortSignal): Promise<SchemaList> {
    const { catalog, run } = this.#call(req, signal);
    const query = { limit: req.limit ?? DEFAULT_CATALOG_LIMIT, ...(req.pattern ? { pattern: req.pattern } : {}) };
    const current = await catalog.currentSchema(run);
    const list = await catalog.listSchemas(run, query);
    return this.#fit(req, { current, ...list });
  }

  async tables(req: TablesRequest, signal?: AbortSignal): Promise<TableList> {
    const call = this.#call(req, signal);
    const schema = await this.#schema(call, req.schema);
    const list = await call.catalog.listTables(call.run, {
      schema,
      limit: req.limit ?? DEFAULT_CATALOG_LIMIT,
      ...(req.pattern ? { pattern: req.pattern } : {}),
    });
    // Rows separated by context values: a row estimate counts the hidden rows too, and the estimate
    // of one partition is one caller's count.
    if (this.#deps.queries.separatesRows(call.target.connection, call.target.scope))
      return this.#fit(req, { ...list, tables: list.tables.map((t) => ({ ...t, rowEstimate: null })) });
    return this.#fit(req, list);
  }

  async describe(req: DescribeRequest, signal?: AbortSignal): Promise<TableDescription> {
    const call = this.#call(req, signal);
    const table = await this.#table(call, req.schema, req.table);
    const described = await call.catalog.describeTable(call.run, table);
    if (described.columns.length > 0 || table.kind !== 'view') return this.#fit(req, described);
    return this.#fit(req, { ...described, columns: await this.#viewColumns(call, table) });
  }

  /**
   * The columns of a view the catalog lists none of, from the view's own result with no rows.
   * MariaDB lists no column of a view over a DEFINER function the caller may not execute (it opens
   * the view as the caller to list them), which is the row-separation recipe's view, while
   * selecting from it works. The statement is sample_rows' with a limit of 0, checked as
   * sample_rows checks it; where it is refused (a curated-only connection, a view over a table the
   * policy refuses) the view is described without columns, as before.
   */
  async #viewColumns(call: Call, table: TableRef): Promise<TableDescription['columns']> {
    const statement = call.catalog.sampleStatement(table, 0);
    const request = { ...call.target, sql: statement.sql, what: "a view's columns (describe_table)", context: call.context };
    try {
      await this.#refuseRefusedReads(call, table, statement.sql);
      const result = await this.#deps.queries.checkedRead(request, (run, sql) => run(sql, statement.params, 1));
      return result.columns.map((c) => ({ name: c.name, type: c.type, nullable: true, default: null, comment: null }));
    } catch (err) {
      if (isHanactlError(err) && (err.code === 'STATEMENT_REFUSED' || err.code === 'FORBIDDEN')) return [];
      throw err;
    }
  }

  async routines(req: RoutinesRequest, signal?: AbortSignal): Promise<RoutineList> {
    const call = this.#call(req, signal);
    const schema = await this.#schema(call, req.schema);
    const list = await call.catalog.listRoutines(call.run, {
      schema,
      limit: req.limit ?? DEFAULT_CATALOG_LIMIT,
      ...(req.pattern ? { pattern: req.pattern } : {}),
    });
    return this.#fit(req, list);
  }

  async search(req: SearchRequest, signal?: AbortSignal): Promise<SearchResult> {
    const { catalog, run } = this.#call(req, signal);
    const found = await catalog.search(run, {
      pattern: req.pattern,
      kinds: req.kinds ?? ObjectKindSchema.options,
      limit: req.limit ?? DEFAULT_CATALOG_LIMIT,
    });
    return this.#fit(req, found);
  }

  /** A few rows of a table proven to exist; one more is asked for, to know whether there are more. */
  async sample(req: SampleRequest, signal?: AbortSignal): Promise<SampleResult> {
    const call = this.#call(req, signal);
    this.#deps.queries.assertFreeAccess?.(call.target.connection, call.target.scope, "a table's rows (sample_rows)");
    const table = await this.#table(call, req.schema, req.table);
    const limit = req.limit ?? DEFAULT_SAMPLE_ROWS;
    const statement = call.catalog.sampleStatement(table, limit + 1);
    await this.#refuseRefusedReads(call, table, statement.sql);
    // The statement names the agent's table: it is checked as run_query's would be, and the server resolves what it reads first.
    const request = { ...call.target, sql: statement.sql, what: "a table's rows (sample_rows)", context: call.context };
    const result = await this.#deps.queries.checkedRead(request, (run, sql) => run(sql, statement.params, limit));
    const { columns, rows, rowCount, truncated, cut } = capQueryResult(result, this.#budget(req));
    return { schema: table.schema, table: table.table, columns, rows, rowCount, truncated, ...(cut ? { cut } : {}) };
  }

  /**
   * sample_rows builds its own SQL, and it meets the same rules as run_query's: the statement
   * goes through the validator (which refuses credential tables, statistics and server files by
   * their catalog spelling, and where rows are separated the executor's statistics), and the relation, resolved to its identity, must not be or read
   * through views one of those (a view over pg_authid).
   */
  async #refuseRefusedReads(call: Call, table: TableRef, sql: string): Promise<void> {
    const refuse = (verdict: StatementVerdict): void => {
      if (verdict.ok) return;
      throw new HanactlError('STATEMENT_REFUSED', verdict.message, { rule: verdict.rule, hint: verdict.hint });
    };
    // Where rows are separated, the executor's statistics views count the hidden rows: a sample, a
    // call and a sample again would compare them as run_query would.
    const options = { rowSeparation: this.#deps.queries.separatesRows(call.target.connection, call.target.scope) };
    refuse(await this.#deps.validate(sql, call.catalog.engine, options));
    const reads = await call.catalog.refusedRead?.(call.run, table, options.rowSeparation);
    if (reads === undefined) return;
    const verdict = await this.#deps.validate(`SELECT * FROM ${reads}`, call.catalog.engine, options);
    const what = `${table.schema}.${table.table}`;
    refuse(
      verdict.ok
        ? {
            ok: false,
            rule: 'credential-read',
            message: `Refused: ${what} reads ${reads}, whose rows hanactl does not return.`,
            hint: 'Sample an ordinary table instead.',
          }
        : { ...verdict, message: `Refused: ${what} reads ${reads}. ${verdict.message}` },
    );
  }

  /**
   * The plan of one read statement; it is never run, but planning runs code (PostgreSQL folds an
   * IMMUTABLE function and calls a STABLE one to estimate), so the statement goes through
   * QueryService.checkedRead: the checks and, on PostgreSQL, the resolve step that run_query's get.
   */
  async explain(req: ExplainRequest, signal?: AbortSignal): Promise<ExplainResult> {
    const call = this.#call(req, signal);
    // Rows separated by context values: the planner's figures count the hidden rows too.
    const figures = !this.#deps.queries.separatesRows(call.target.connection, call.target.scope);
    if (!figures && !call.catalog.planShape) {
      throw new HanactlError(
        'STATEMENT_REFUSED',
        `Refused: "${call.target.connection}" separates rows by context values, and a ${call.catalog.engine} plan carries the planner's figures (row estimates, costs), which count the rows hidden from you and can reveal another caller's values; explain_query cannot leave them out on this engine.`,
        { rule: 'planner-figures', hint: 'Ask a person to look at the plan in a database client.' },
      );
    }
    const options = figures ? undefined : { figures: false };
    const request = {
      ...call.target,
      sql: withoutTrailingSemicolons(req.sql),
      what: 'free SQL (explain_query)',
      context: call.context,
      writes: call.catalog.explainWrites,
    };
    const plan = await this.#deps.queries.checkedRead(request, (run, sql) => call.catalog.explain(rowsOf(run), sql, options));
    return this.#fit(req, plan);
  }

  /** The connection's byte budget for one answer (the default where the queries cannot say). */
  #budget(req: { connection: string; project?: string; session?: string }): ResultBudget {
    const scope = { ...(req.project ? { project: req.project } : {}), ...(req.session ? { session: req.session } : {}) };
    return this.#deps.queries.budgetOf?.(req.connection, scope) ?? resultBudget(req.connection);
  }

  /** An answer cut to the budget before it leaves the service, so no transport serializes more. */
  #fit<T extends object>(req: { connection: string; project?: string; session?: string }, answer: T): T {
    return capCatalogResult(answer, this.#budget(req));
  }

  /** The engine's catalog and an executor on the read-only path, with the caller's context values and signal. */
  #call(req: Scoped, signal: AbortSignal | undefined): Call {
    const { connection, context } = req;
    // A `project:<name>` connection resolves in the caller's project, as run_query's do.
    const scope = { ...(req.project ? { project: req.project } : {}), ...(req.session ? { session: req.session } : {}) };
    const target: StatementTarget = { connection, scope, ...(signal ? { signal } : {}) };
    const catalog = this.#catalogs[this.#deps.queries.engineOf(connection, scope)];
    const run: CatalogExecutor = async (sql, params, maxRows) =>
      (await this.#deps.queries.runTrusted({ ...target, sql, params, maxRows, context })).rows;
    return { catalog, run, target, context };
  }

  async #schema(call: Call, requested: string | undefined): Promise<string> {
    if (requested) return requested;
    const current = await call.catalog.currentSchema(call.run);
    if (current) return current;
    throw new HanactlError('INVALID_REQUEST', 'This connection has no current schema; pass `schema` (list_schemas shows them).');
  }

  /**
   * Proves a table or view exists and returns its names as the catalog spells them: the exact
   * match, else the only case-insensitive one. `orders.items` without a schema is also tried as
   * schema `orders`, table `items`.
   */
  async #table(call: Call, schema: string | undefined, table: string): Promise<TableRef> {
    const inSchema = await this.#schema(call, schema);
    const found = pick(await call.catalog.findTables(call.run, inSchema, table), inSchema, table);
    if (found !== undefined && !Array.isArray(found)) return found;
    const dot = table.indexOf('.');
    if (!schema && !found && dot > 0 && dot < table.length - 1) {
      const [s, t] = [table.slice(0, dot), table.slice(dot + 1)];
      const qualified = pick(await call.catalog.findTables(call.run, s, t), s, t);
      if (qualified !== undefined && !Array.isArray(qualified)) return qualified;
    }
    if (Array.isArray(found)) {
      const names = found.map((f) => JSON.stringify(`${f.schema}.${f.table}`)).join(', ');
      throw new HanactlError('INVALID_REQUEST', `${JSON.stringify(table)} matches ${names} when case is ignored; pass the exact name.`);
    }
    throw new HanactlError(
      'NOT_FOUND',
      `No table or view ${JSON.stringify(table)} in schema ${JSON.stringify(inSchema)}. Find names with list_tables or search_objects.`,
    );
  }
}

/** A catalog's executor over a checked read's: the rows alone. */
function rowsOf(run: CheckedExecutor): CatalogExecutor {
  return async (sql, params, maxRows) => (await run(sql, params, maxRows)).rows;
}

/** The exact match, else the only candidate; several candidates come back as an array. */
function pick(found: readonly TableRef[], schema: string, table: string): TableRef | TableRef[] | undefined {
  const exact = found.filter((f) => f.schema === schema && f.table === table);
  if (exact.length === 1) return exact[0];
  if (found.length === 1) return found[0];
  return found.length > 1 ? [...found] : undefined;
}
