import type { SessionInfo } from '../../shared/schemas.js';
import type { CallInfo, CallSummary } from './call-tracker.js';

/** The catalog operations, and the tool each serves, as the audit trail names it. */
export const CATALOG_TOOLS = {
  schemas: 'list_schemas',
  tables: 'list_tables',
  describe: 'describe_table',
  routines: 'list_routines',
  explain: 'explain_query',
  sample: 'sample_rows',
  search: 'search_objects',
} as const;

export type CatalogOp = keyof typeof CATALOG_TOOLS;

/** What the audit trail records of a catalog call: the SQL for explain, else the arguments (no context values). */
function describeCall(op: CatalogOp, body: Record<string, unknown>): string {
  if (op === 'explain' && typeof body.sql === 'string') return body.sql;
  const { connection: _c, session: _s, context: _x, project: _p, ...args } = body;
  return `${CATALOG_TOOLS[op]} ${JSON.stringify(args)}`;
}

/** What the tracker and the audit trail learn from a catalog request: never context values. */
export function catalogCallInfo(
  op: CatalogOp,
  body: Record<string, unknown> & { connection: string; project?: string | undefined },
  session: SessionInfo | undefined,
): CallInfo {
  return {
    connection: body.connection,
    statement: describeCall(op, body),
    paramCount: 0,
    tool: CATALOG_TOOLS[op],
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
