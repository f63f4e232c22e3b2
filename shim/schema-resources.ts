import { type McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ReadResourceRequestSchema,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { isHanactlError } from '../shared/errors.js';
import type { Broker } from './broker.js';
import { describeText } from './catalog-tools.js';
import { projectScope } from './project-scope.js';
import { fenceData } from './render.js';
import type { SessionState } from './session-state.js';
import { pickConnection } from './tools.js';

/** The URI template of a table or view resource; each part is URL-encoded (SQLite's schema is `main`). */
export const TABLE_URI_TEMPLATE = 'hanactl://{connection}/{schema}/{table}';
/** resources/list answers this many per page; `nextCursor` leads to the next. */
export const RESOURCE_PAGE_SIZE = 100;
/** At most this many tables and views are listed in all (the rest are reached by URI, completion or the catalog tools). */
export const MAX_LISTED_RESOURCES = 1000;
/** At most this many schemas are walked for the listing, the current one first. */
export const MAX_LISTED_SCHEMAS = 50;
/** A listing is reused for its next pages this long. */
const LISTING_TTL_MS = 30_000;
/** JSON-RPC code MCP gives a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A protocol error whose message reaches the client as written: the SDK's McpError puts
 * "MCP error <code>:" in its message, which the client's McpError then repeats.
 */
export class ResourceError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.name = 'ResourceError';
    this.code = code;
  }
}

/** The URI of one table or view. */
export function tableUri(connection: string, schema: string, table: string): string {
  return `hanactl://${[connection, schema, table].map(encodeURIComponent).join('/')}`;
}

const SHAPE = 'expected hanactl://<connection>/<schema>/<table> with each part URL-encoded, as resources/list gives';

/** The three names of a table URI; a malformed one is an InvalidParams error that says what is wrong. */
export function parseTableUri(uri: string): { connection: string; schema: string; table: string } {
  const parts = /^hanactl:\/\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)$/.exec(uri);
  if (!parts) throw new ResourceError(ErrorCode.InvalidParams, `${JSON.stringify(uri)} is not a hanactl table resource: ${SHAPE}.`);
  try {
    const [connection, schema, table] = parts.slice(1).map((p) => decodeURIComponent(p as string)) as [string, string, string];
    return { connection, schema, table };
  } catch {
    throw new ResourceError(ErrorCode.InvalidParams, `${JSON.stringify(uri)} has a part that is not valid URL encoding: ${SHAPE}.`);
  }
}

/** A broker failure as a protocol error: the code and the daemon's sentence. */
function protocolError(err: unknown, code: number = ErrorCode.InternalError): ResourceError {
  if (err instanceof ResourceError) return err;
  if (isHanactlError(err)) {
    // What the caller can correct is its request's fault; a database or the broker at fault is not.
    const fault = err.category === 'agent' ? code : ErrorCode.InternalError;
    const which = err.code === 'NOT_FOUND' || err.code === 'CONNECTION_NOT_FOUND' ? RESOURCE_NOT_FOUND : fault;
    return new ResourceError(which, `${err.code}: ${err.message}`);
  }
  return new ResourceError(code, `INTERNAL: ${err instanceof Error ? err.message : String(err)}`);
}

/** Names starting with what was typed, for completion/complete (best effort: a failure completes nothing). */
const prefix = (value: string) => (value ? `${value}%` : undefined);
const quietly = async (names: () => Promise<string[]>): Promise<string[]> => names().catch(() => []);

/**
 * The tables and views of the session's active connection as MCP resources
 * (`hanactl://<connection>/<schema>/<table>`), read as text: columns, keys and the row estimate.
 * Everything goes through the same catalog services, policy and context values as
 * list_tables and describe_table. resources/list is bounded and paged; the template completes
 * connection, schema and table names; a change of active connection sends
 * `notifications/resources/list_changed`. Returns the completers the prompts reuse.
 */
export function registerSchemaResources(
  server: McpServer,
  daemon: Broker,
  state: SessionState,
): { readonly names: SchemaNames; read(uri: string): Promise<ReadResourceResult> } {
  const target = async (connection: string | undefined) => {
    const scope = await projectScope(state);
    return {
      connection: pickConnection(state, connection),
      ...scope,
      ...(Object.keys(state.context).length > 0 ? { context: { ...state.context } } : {}),
    };
  };

  const names: SchemaNames = {
    current: async () => (await daemon.listSchemas({ ...(await target(undefined)), limit: 1 })).current,
    connections: (value) =>
      quietly(async () => {
        if (state.fixed) return state.active ? [state.active] : [];
        const { connections } = await daemon.listConnections(await projectScope(state));
        return connections.map((c) => c.name).filter((n) => n.toLowerCase().startsWith(value.toLowerCase()));
      }),
    schemas: (value, connection) =>
      quietly(async () => {
        const pattern = prefix(value);
        return (await daemon.listSchemas({ ...(await target(connection)), limit: 100, ...(pattern ? { pattern } : {}) })).schemas;
      }),
    tables: (value, schema, connection) =>
      quietly(async () => {
        const pattern = prefix(value);
        const body = { ...(await target(connection)), limit: 100, ...(schema ? { schema } : {}), ...(pattern ? { pattern } : {}) };
        return (await daemon.listTables(body)).tables.map((t) => t.name);
      }),
  };

  const read = async (uri: string): Promise<ReadResourceResult> => {
    const { connection, schema, table } = parseTableUri(uri);
    try {
      const body = await target(connection);
      const d = await daemon.describeTable({ ...body, schema, table });
      // The estimate is list_tables': the engine's statistics, never a count.
      const listed = await daemon.listTables({ ...body, schema: d.schema, pattern: d.table, limit: 1000 });
      const estimate = listed.tables.find((t) => t.name === d.table)?.rowEstimate ?? null;
      const rows = estimate === null ? 'row estimate: none (the engine keeps no statistics for it)' : `about ${estimate} rows (estimate)`;
      const head = `${d.schema}.${d.table} (${d.kind}) on connection "${body.connection}": ${d.columns.length} columns, ${rows}.`;
      const text = `${head}${d.cut ? `\n${d.cut.note}` : ''}\n${fenceData(describeText(d))}`;
      return { contents: [{ uri, mimeType: 'text/plain', text }] };
    } catch (err) {
      throw protocolError(err, ErrorCode.InvalidParams);
    }
  };

  let listing: { connection: string; at: number; resources: Resource[] } | undefined;
  const list = async (connection: string): Promise<Resource[]> => {
    const body = await target(connection);
    const { current, schemas } = await daemon.listSchemas({ ...body, limit: MAX_LISTED_SCHEMAS });
    // The current schema first, even when it sorts past the schemas walked.
    const ordered = current ? [current, ...schemas.filter((s) => s !== current)] : schemas;
    const resources: Resource[] = [];
    for (const schema of ordered) {
      const left = MAX_LISTED_RESOURCES - resources.length;
      if (left <= 0) break;
      const { tables } = await daemon.listTables({ ...body, schema, limit: Math.min(left, 1000) });
      for (const t of tables)
        resources.push({
          uri: tableUri(body.connection, schema, t.name),
          name: `${schema}.${t.name}`,
          description: `${t.kind}${t.rowEstimate === null ? '' : `, ~${t.rowEstimate} rows`}${t.comment ? `: ${t.comment.slice(0, 120)}` : ''}`,
          mimeType: 'text/plain',
        });
    }
    return resources;
  };

  server.registerResource(
    'table',
    new ResourceTemplate(TABLE_URI_TEMPLATE, {
      list: undefined,
      complete: {
        connection: (value) => names.connections(value),
        schema: (value, context) => names.schemas(value, context?.arguments?.connection),
        table: (value, context) => names.tables(value, context?.arguments?.schema, context?.arguments?.connection),
      },
    }),
    {
      title: 'Table or view',
      description: 'Columns (name, type, nullable, default), primary and foreign keys, indexes and the row estimate of one table or view.',
      mimeType: 'text/plain',
    },
    (uri) => read(uri.href),
  );

  // The SDK's own handlers neither page nor explain a malformed URI: these replace them.
  server.server.setRequestHandler(ListResourcesRequestSchema, async (request) => {
    const connection = state.active;
    if (!connection) return { resources: [] };
    const cursor = request.params?.cursor;
    let offset = 0;
    if (cursor !== undefined) {
      const [of, at] = [Number(cursor.split(':')[0]), cursor.slice(cursor.indexOf(':') + 1)];
      if (!Number.isInteger(of) || of < 0 || at !== connection || !listing || listing.connection !== connection)
        throw new ResourceError(
          ErrorCode.InvalidParams,
          'The cursor belongs to an earlier listing (or another connection); list again without a cursor.',
        );
      offset = of;
    }
    if (cursor === undefined || !listing || Date.now() - listing.at > LISTING_TTL_MS) {
      try {
        listing = { connection, at: Date.now(), resources: await list(connection) };
      } catch (err) {
        throw protocolError(err);
      }
    }
    const page = listing.resources.slice(offset, offset + RESOURCE_PAGE_SIZE);
    const next =
      offset + RESOURCE_PAGE_SIZE < listing.resources.length ? { nextCursor: `${offset + RESOURCE_PAGE_SIZE}:${connection}` } : {};
    return { resources: page, ...next };
  });
  server.server.setRequestHandler(ReadResourceRequestSchema, (request) => read(request.params.uri));

  // Another active connection, other tables: clients that show resources list them again.
  let shown = state.active;
  state.watch(() => {
    if (state.active === shown) return;
    shown = state.active;
    listing = undefined;
    server.sendResourceListChanged();
  });
  return { names, read };
}

/** Completers of connection, schema and table names (prefix, case-insensitive, at most 100). */
export interface SchemaNames {
  /** The active connection's current schema, or null where it has none. */
  current(): Promise<string | null>;
  connections(value: string): Promise<string[]>;
  schemas(value: string, connection?: string): Promise<string[]>;
  tables(value: string, schema?: string, connection?: string): Promise<string[]>;
}
