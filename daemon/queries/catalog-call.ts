import type { z } from 'zod';
import {
  DescribeRequestSchema,
  ExplainRequestSchema,
  RoutinesRequestSchema,
  SampleRequestSchema,
  SchemasRequestSchema,
  SearchRequestSchema,
  TablesRequestSchema,
} from '../../shared/catalog-schemas.js';
import type { SessionInfo } from '../../shared/schemas.js';
import type { CatalogService } from '../catalog/catalog-service.js';
import type { CallInfo, CallSummary } from './call-tracker.js';
import { type Caller, type TrackedCallDeps, trackCall } from './tracked-call.js';

/** A catalog request body once checked: the connection it names, where it resolves, the rest per operation. */
export type CatalogBody = Record<string, unknown> & { connection: string; session?: string | undefined; project?: string | undefined };

interface CatalogOpSpec {
  /** The tool it serves, as the audit trail names it. */
  readonly tool: string;
  /** Its body, the same on the daemon API and in the MCP tools. */
  readonly schema: z.ZodType<CatalogBody>;
  run(catalog: CatalogService, body: CatalogBody, signal: AbortSignal | undefined): Promise<unknown>;
}

const spec = <S extends z.ZodType<{ connection: string }>>(
  tool: string,
  schema: S,
  run: (catalog: CatalogService, body: z.infer<S>, signal: AbortSignal | undefined) => Promise<unknown>,
): CatalogOpSpec => ({ tool, schema: schema as unknown as z.ZodType<CatalogBody>, run: (c, b, s) => run(c, b as z.infer<S>, s) });

/** The catalog operations: the tool each serves, its body schema and the service method that answers it. */
export const CATALOG_OPS = {
  schemas: spec('list_schemas', SchemasRequestSchema, (c, b, s) => c.schemas(b, s)),
  tables: spec('list_tables', TablesRequestSchema, (c, b, s) => c.tables(b, s)),
  describe: spec('describe_table', DescribeRequestSchema, (c, b, s) => c.describe(b, s)),
  routines: spec('list_routines', RoutinesRequestSchema, (c, b, s) => c.routines(b, s)),
  explain: spec('explain_query', ExplainRequestSchema, (c, b, s) => c.explain(b, s)),
  sample: spec('sample_rows', SampleRequestSchema, (c, b, s) => c.sample(b, s)),
  search: spec('search_objects', SearchRequestSchema, (c, b, s) => c.search(b, s)),
} as const satisfies Record<string, CatalogOpSpec>;

export type CatalogOp = keyof typeof CATALOG_OPS;

/** The operation named `name`, or undefined. */
export const catalogOp = (name: string): CatalogOp | undefined => (Object.hasOwn(CATALOG_OPS, name) ? (name as CatalogOp) : undefined);

/** What the audit trail records of a catalog call: the SQL for explain, else the arguments (no context values). */
function describeCall(op: CatalogOp, body: CatalogBody): string {
  if (op === 'explain' && typeof body.sql === 'string') return body.sql;
  const { connection: _c, session: _s, context: _x, project: _p, ...args } = body;
  return `${CATALOG_OPS[op].tool} ${JSON.stringify(args)}`;
}

/** What the tracker and the audit trail learn from a catalog request: never context values. */
export function catalogCallInfo(op: CatalogOp, body: CatalogBody, session: SessionInfo | undefined): CallInfo {
  return {
    connection: body.connection,
    statement: describeCall(op, body),
    paramCount: 0,
    tool: CATALOG_OPS[op].tool,
    ...(session ? { session: { id: session.id, client: session.client } } : {}),
    ...((body.project ?? session?.project) ? { project: body.project ?? session?.project } : {}),
  };
}

/** Rows for the audit record: the row count, else the length of the first list in the answer. */
export function summarizeCatalog(result: unknown): CallSummary {
  if (!result || typeof result !== 'object') return {};
  const r = result as Record<string, unknown>;
  const list = Object.values(r).find(Array.isArray);
  return {
    ...(typeof r.rowCount === 'number' ? { rows: r.rowCount } : list ? { rows: list.length } : {}),
    ...(typeof r.truncated === 'boolean' ? { truncated: r.truncated } : {}),
  };
}

/** One catalog operation on a checked body, with its bookkeeping; its statements run under the call's signal. */
export function trackCatalog(
  deps: TrackedCallDeps,
  catalog: CatalogService,
  op: CatalogOp,
  body: CatalogBody,
  caller: Caller,
): Promise<unknown> {
  return trackCall(deps, caller, {
    session: body.session,
    describe: (session) => catalogCallInfo(op, body, session),
    run: (signal) => CATALOG_OPS[op].run(catalog, body, signal),
    summarize: summarizeCatalog,
  });
}
