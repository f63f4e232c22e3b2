import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { MAX_SAMPLE_ROWS, ObjectKindSchema, type TableDescription } from '../shared/catalog-schemas.js';
import type { ResultCut } from '../shared/schemas.js';
import { renderTable } from '../shared/text-table.js';
import type { Broker } from './broker.js';
import { projectScope } from './project-scope.js';
import { fenceData } from './render.js';
import type { SessionState } from './session-state.js';
import { guarded, ok } from './tool-result.js';
import { pickConnection } from './tools.js';

/** Long catalog text (comments, defaults, arguments) is cut here, with a marker, to spare the agent's context. */
function clip(value: string | null | undefined, max = 60): string {
  const flat = (value ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…[cut]` : flat;
}

/*
 * Input schemas stay minimal (plain strings, few descriptions) because every byte of tools/list
 * sits in the agent's context; the daemon checks names, patterns and limits with the shared schemas.
 */
const connection = z.string().optional().describe('Use this connection for this call only.');
const schema = z.string().optional();
const likePattern = z.string().describe('% _ wildcards, else substring');
const list = z.array(z.unknown());
/** Set when the daemon cut the answer to the connection's byte cap; its note is also in the text. */
const cut = { cut: z.unknown().optional() };
/** Lists report `truncated`; how many matched in all is in the text (`200 of 2000 ... shown`). */
const capped = { truncated: z.boolean(), ...cut };
const readOnly = { readOnlyHint: true } as const;

/**
 * A summary line the shim writes, then database text (names, comments, rows) fenced as data.
 * Where the daemon cut the answer to its byte cap, its note follows the summary.
 */
const answer = (head: string, body: string, structured: Record<string, unknown>, cut?: ResultCut) =>
  ok(`${head}${cut ? `\n${cut.note}` : ''}\n${fenceData(body)}`, cut ? { ...structured, cut } : structured);

/** The first line of a capped list: how many, and how to narrow when there are more. */
function summary(shown: number, total: number, truncated: boolean, [one, many]: readonly [string, string]): string {
  if (truncated) return `${shown} of ${total} ${many} shown. Narrow with pattern (e.g. "cust%").`;
  return `${total} ${total === 1 ? one : many}.`;
}

/** The text of describe_table (and of a table resource): columns, then keys and indexes. */
export function describeText(d: TableDescription): string {
  const columns = d.columns.map((c) => ({ ...c, null: c.nullable ? 'yes' : 'no', default: clip(c.default), comment: clip(c.comment) }));
  const lines = [renderTable(['name', 'type', 'null', 'default', ...(d.columns.some((c) => c.comment) ? ['comment'] : [])], columns)];
  if (d.comment) lines.unshift(`Comment: ${clip(d.comment, 200)}`);
  if (d.primaryKey.length > 0) lines.push(`Primary key: (${d.primaryKey.join(', ')})`);
  for (const f of d.foreignKeys)
    lines.push(`Foreign key ${f.name}: (${f.columns.join(', ')}) -> ${f.refSchema}.${f.refTable} (${f.refColumns.join(', ')})`);
  for (const i of d.indexes) lines.push(`Index ${i.name}${i.primary ? ' PRIMARY' : i.unique ? ' UNIQUE' : ''}: (${i.columns.join(', ')})`);
  return lines.join('\n');
}

/** Optional fields of a body, left out when the agent gave none. */
const given = <T extends Record<string, unknown>>(fields: T): Partial<T> =>
  Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0)),
  ) as Partial<T>;

/**
 * The catalog tools: list_schemas, list_tables, describe_table, list_routines, explain_query,
 * sample_rows, search_objects. Each takes an optional `connection` overriding the session's
 * active one for one call, sends the session's context values like run_query, answers a summary
 * line plus fenced database text and `structuredContent`, and fails with `isError`.
 */
/** Returns the tools a curated-only connection does not offer: explain_query and sample_rows take free SQL or read any table. */
export function registerCatalogTools(server: McpServer, daemon: Broker, state: SessionState): { readonly freeAccess: RegisteredTool[] } {
  /** The call's connection, session and context values, for any body. */
  const target = async (override: string | undefined) => {
    const scope = await projectScope(state);
    const name = pickConnection(state, override);
    return {
      connection: name,
      ...scope,
      ...(Object.keys(state.context).length > 0 ? { context: { ...state.context } } : {}),
    };
  };

  server.registerTool(
    'list_schemas',
    {
      description: 'List schemas (MySQL: databases), marking the current one. Start here.',
      inputSchema: { pattern: z.string().optional(), connection },
      outputSchema: { current: z.string().nullable(), schemas: z.array(z.string()), ...capped },
      annotations: readOnly,
    },
    ({ pattern, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.listSchemas({ ...(await target(connection)), ...given({ pattern }) }, extra.signal);
        const rows = r.schemas.map((s) => ({ schema: s, current: s === r.current ? '*' : '' }));
        const head = summary(r.schemas.length, r.total, r.truncated, ['schema', 'schemas']);
        return answer(
          head,
          renderTable(['schema', 'current'], rows),
          { current: r.current, schemas: r.schemas, truncated: r.truncated },
          r.cut,
        );
      }),
  );

  server.registerTool(
    'list_tables',
    {
      description: 'Tables and views of a schema (default current) with estimated rows.',
      inputSchema: { schema, pattern: likePattern.optional(), connection },
      outputSchema: { schema: z.string(), tables: list, ...capped },
      annotations: readOnly,
    },
    ({ schema, pattern, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.listTables({ ...(await target(connection)), ...given({ schema, pattern }) }, extra.signal);
        const view = { schema: r.schema, tables: r.tables, truncated: r.truncated };
        if (r.total === 0)
          return ok(
            `No tables or views in schema "${r.schema}"${pattern ? ' match' : ''}. Names are exact; list_schemas shows schemas.`,
            view,
          );
        const rows = r.tables.map((t) => ({ ...t, rows: t.rowEstimate === null ? '' : `~${t.rowEstimate}`, comment: clip(t.comment) }));
        const estimates = r.tables.some((t) => t.rowEstimate !== null) ? ['rows'] : [];
        const comments = r.tables.some((t) => t.comment) ? ['comment'] : [];
        const head = `Schema "${r.schema}": ${summary(r.tables.length, r.total, r.truncated, ['table or view', 'tables and views'])}`;
        return answer(head, renderTable(['name', 'kind', ...estimates, ...comments], rows), view, r.cut);
      }),
  );

  server.registerTool(
    'describe_table',
    {
      description: 'Columns, keys and indexes of a table; check before writing SQL.',
      inputSchema: { table: z.string(), schema, connection },
      outputSchema: {
        schema: z.string(),
        table: z.string(),
        kind: z.string(),
        comment: z.string().nullable(),
        columns: list,
        primaryKey: list,
        foreignKeys: list,
        indexes: list,
        ...cut,
      },
      annotations: readOnly,
    },
    ({ table, schema, connection }, extra) =>
      guarded(async () => {
        const d = await daemon.describeTable({ ...(await target(connection)), table, ...given({ schema }) }, extra.signal);
        return answer(`${d.schema}.${d.table} (${d.kind}), ${d.columns.length} columns.`, describeText(d), d, d.cut);
      }),
  );

  server.registerTool(
    'list_routines',
    {
      description: 'Procedures and functions of a schema (default current) with arguments.',
      inputSchema: { schema, pattern: z.string().optional(), connection },
      outputSchema: { schema: z.string(), routines: list, ...capped },
      annotations: readOnly,
    },
    ({ schema, pattern, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.listRoutines({ ...(await target(connection)), ...given({ schema, pattern }) }, extra.signal);
        const view = { schema: r.schema, routines: r.routines, truncated: r.truncated };
        if (r.total === 0) return ok(r.note ?? `No procedures or functions in schema "${r.schema}"${pattern ? ' match' : ''}.`, view);
        const rows = r.routines.map((x) => ({ ...x, arguments: clip(x.arguments, 120), returns: clip(x.returns) }));
        const head = `Schema "${r.schema}": ${summary(r.routines.length, r.total, r.truncated, ['routine', 'routines'])}`;
        return answer(head, renderTable(['name', 'kind', 'arguments', 'returns'], rows), view, r.cut);
      }),
  );

  const explainQuery = server.registerTool(
    'explain_query',
    {
      description: 'Plan of one read statement, without running it.',
      inputSchema: { sql: z.string(), connection },
      outputSchema: { text: z.string(), plan: z.unknown(), ...cut },
      annotations: readOnly,
    },
    ({ sql, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.explainQuery({ ...(await target(connection)), sql }, extra.signal);
        return answer(`Plan (${r.engine}, estimated, not run):`, r.text, { text: r.text, plan: r.plan }, r.cut);
      }),
  );

  const sampleRows = server.registerTool(
    'sample_rows',
    {
      description: `A few rows of a table to see real values (default 10, max ${MAX_SAMPLE_ROWS}).`,
      inputSchema: { table: z.string(), schema, limit: z.number().int().optional(), connection },
      outputSchema: { schema: z.string(), table: z.string(), columns: list, rows: list, rowCount: z.number(), ...capped },
      annotations: readOnly,
    },
    ({ table, schema, limit, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.sampleRows({ ...(await target(connection)), table, ...given({ schema, limit }) }, extra.signal);
        const more = r.truncated ? '; more exist (raise limit, or run_query with WHERE)' : '';
        const head = `${r.rowCount} row${r.rowCount === 1 ? '' : 's'} of ${r.schema}.${r.table}${more}.`;
        const names = r.columns.map((c) => c.name);
        if (r.rowCount === 0) return ok(`${head}\nColumns: ${names.join(', ')}`, r);
        return answer(head, renderTable(names, r.rows, Infinity), r, r.cut);
      }),
  );

  server.registerTool(
    'search_objects',
    {
      description: 'Find tables, views, columns and routines by name in all schemas.',
      inputSchema: { pattern: likePattern, kinds: z.array(ObjectKindSchema).optional(), connection },
      outputSchema: { hits: list, ...capped },
      annotations: readOnly,
    },
    ({ pattern, kinds, connection }, extra) =>
      guarded(async () => {
        const r = await daemon.searchObjects({ ...(await target(connection)), pattern, ...given({ kinds }) }, extra.signal);
        const view = { hits: r.hits, truncated: r.truncated };
        if (r.total === 0) return ok(`Nothing named like "${pattern}".`, view);
        const rows = r.hits.map((h) => ({
          kind: h.kind,
          name: h.table ? `${h.schema}.${h.table}.${h.name}` : `${h.schema}.${h.name}`,
          detail: clip(h.detail),
        }));
        return answer(
          summary(r.hits.length, r.total, r.truncated, ['match', 'matches']),
          renderTable(['kind', 'name', 'detail'], rows),
          view,
          r.cut,
        );
      }),
  );
  return { freeAccess: [explainQuery, sampleRows] };
}
