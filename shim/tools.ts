import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { cliCommand } from '../shared/cli-command.js';
import { unscopedConnection } from '../shared/context-scope.js';
import { HanactlError } from '../shared/errors.js';
import { isProjectRef } from '../shared/project-schemas.js';
import { ConnectionRefSchema, DEFAULT_MAX_ROWS, MAX_MAX_ROWS, MAX_PARAMS, ParamSchema } from '../shared/schemas.js';
import { renderTable } from '../shared/text-table.js';
import type { Broker } from './broker.js';
import { withProgress } from './progress.js';
import { projectScope } from './project-scope.js';
import { renderQueryResult } from './render.js';
import type { SessionState } from './session-state.js';
import { guarded, ok } from './tool-result.js';
import { approvalNote, WriteApproval } from './write-approval.js';

const connectionArg = ConnectionRefSchema.optional().describe('Run against this connection for this call only.');

const RowsOutputShape = {
  columns: z.array(z.object({ name: z.string(), type: z.string() })),
  rows: z.array(z.record(z.string(), z.unknown())),
  rowCount: z.number(),
  truncated: z.boolean(),
  /** What the byte cap cut (`ResultCut`); left open here to keep tools/list small. */
  cut: z.unknown().optional(),
};

/** Which connection a call uses: the explicit argument, else the session's active one. */
export function pickConnection(state: SessionState, override: string | undefined): string {
  if (state.fixed && override !== undefined && override !== state.active) {
    throw new HanactlError(
      'FORBIDDEN',
      `This session's endpoint fixes the connection "${state.active}"; a call cannot use "${override}". Connect to that connection's own endpoint instead.`,
    );
  }
  const name = override ?? state.active;
  if (!name) {
    throw new HanactlError(
      'CONNECTION_NOT_FOUND',
      'No connection is selected. Call list_connections, then use_connection {name}, or pass `connection` with this call.',
    );
  }
  return name;
}

/** How a connection's access reads to the agent: writes that wait for a person say so before the agent sends one. */
function accessOf(c: { allowWrite: boolean; approveWrites?: boolean | undefined }): string {
  return c.allowWrite ? (c.approveWrites ? "read-write, each write waits for a person's approval" : 'read-write') : 'read-only';
}

const READ_ONLY_ANNOTATIONS = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
const WRITABLE_ANNOTATIONS = { readOnlyHint: false, destructiveHint: true, openWorldHint: false };

/** The shim's tools; the same definitions serve every transport. Returns a hook that keeps
 * run_query's annotations in line with the active connection's write policy. */
export function registerTools(
  server: McpServer,
  daemon: Broker,
  state: SessionState,
): { onActive(allowWrite: boolean): void; readonly runQuery: RegisteredTool } {
  server.registerTool(
    'list_connections',
    {
      title: 'List connections',
      description: 'List the database connections you may use, and which one is active.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const { connections, project } = await daemon.listConnections(await projectScope(state));
        // Why the project adds nothing (not trusted, a bad path), in the daemon's words.
        const note = project && project.status !== 'ok' && project.message ? `\n${project.message}` : '';
        const projectView = project ? { project } : {};
        if (connections.length === 0) {
          const none = `No connections are registered. Ask a person to add one with \`${cliCommand()} add <name> <url>\`.`;
          return ok(`${none}${note}`, { connections: [], active: state.active, ...projectView });
        }
        const rows = connections.map((c) => ({
          name: c.name,
          active: c.name === state.active ? '*' : '',
          engine: c.engine,
          access: accessOf(c),
          description: c.description ?? '',
        }));
        const text = renderTable(['name', 'active', 'engine', 'access', 'description'], rows);
        const view = connections.map(({ name, engine, description, allowWrite, context }) => ({
          name,
          engine,
          description,
          allowWrite,
          context,
        }));
        return ok(`${text}${note}`, { connections: view, active: state.active, ...projectView });
      }),
  );

  // Not offered where the endpoint's URL fixes the connection (MCP over HTTP).
  if (!state.fixed)
    server.registerTool(
      'use_connection',
      {
        title: 'Use connection',
        description: 'Make a connection the active one for this session (other sessions are not affected).',
        inputSchema: { name: ConnectionRefSchema.describe('A name from list_connections.') },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      ({ name }) =>
        guarded(async () => {
          const info = await daemon.getConnection(name, await projectScope(state));
          // Refused at the switch, not only at each call after it: a scoped session stays in scope.
          const carried = Object.keys(state.context).map((n) => n.trim().toUpperCase());
          if (carried.length > 0 && info.context.length === 0) throw unscopedConnection(carried, info.name);
          state.active = info.name;
          // A registry choice stays across project changes; a project connection follows the project.
          state.pinned = !isProjectRef(info.name);
          queryTool.onActive(info.allowWrite);
          void state.announce();
          return ok(`Now using "${info.name}" (${info.engine}, ${accessOf(info)}).`, {
            active: info.name,
            engine: info.engine,
          });
        }),
    );

  server.registerTool(
    'current_connection',
    {
      title: 'Current connection',
      description: 'Show the active connection of this session.',
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () =>
      guarded(async () => {
        const scope = await projectScope(state);
        if (!state.active) return ok('No connection is active. Call list_connections, then use_connection.', { active: null });
        const info = await daemon.getConnection(state.active, scope);
        const scoped = info.context.length > 0 ? `; context parameters: ${info.context.join(', ')}` : '';
        const found = info.source ? ` (found in ${info.source})` : '';
        const cost = info.maxCost !== undefined ? `; reads whose plan costs more than ${info.maxCost} are refused unrun` : '';
        return ok(`Active: "${info.name}" (${info.engine}, ${accessOf(info)}) ${info.url}${scoped}${cost}${found}`, {
          active: info.name,
          engine: info.engine,
          allowWrite: info.allowWrite,
          context: info.context,
          ...(info.maxCost !== undefined ? { maxCost: info.maxCost } : {}),
        });
      }),
  );

  const runQuery = server.registerTool(
    'run_query',
    {
      title: 'Run SQL',
      description:
        'Run one SQL statement on the active connection (read-only unless a person allowed writes). Bind values with params ($1 on PostgreSQL, ? elsewhere).',
      inputSchema: {
        sql: z.string().min(1).describe('Exactly one statement.'),
        params: z
          .array(ParamSchema)
          .max(MAX_PARAMS, `params holds at most ${MAX_PARAMS} values`)
          .optional()
          .describe(`Values for the placeholders (at most ${MAX_PARAMS}).`),
        maxRows: z.number().int().min(1).max(MAX_MAX_ROWS).optional().describe(`Row cap (default ${DEFAULT_MAX_ROWS}).`),
        connection: connectionArg,
      },
      outputSchema: RowsOutputShape,
      annotations: READ_ONLY_ANNOTATIONS,
    },
    ({ sql, params, maxRows, connection }, extra) =>
      guarded(async () => {
        const { session, project } = await projectScope(state);
        const name = pickConnection(state, connection);
        const approval = new WriteApproval(server, extra.requestId, state.approvalInClient);
        const result = await withProgress(
          extra,
          (seconds) => approval.progress() ?? `The statement on "${name}" is still running (${seconds} s).`,
          () =>
            daemon.query(
              {
                connection: name,
                sql,
                ...(params ? { params } : {}),
                ...(maxRows ? { maxRows } : {}),
                ...(session ? { session } : {}),
                ...(project ? { project } : {}),
                ...(Object.keys(state.context).length > 0 ? { context: { ...state.context } } : {}),
                tool: 'run_query',
              },
              extra.signal,
              approval.hooks,
            ),
        );
        const { columns, rows, rowCount, truncated, cut } = result;
        return ok(`${approvalNote(result)}${renderQueryResult(result, maxRows ?? DEFAULT_MAX_ROWS)}`, {
          columns,
          rows,
          rowCount,
          truncated,
          ...(cut ? { cut } : {}),
        });
      }),
  );
  let writable = false;
  const queryTool = {
    runQuery,
    onActive(allowWrite: boolean): void {
      if (allowWrite === writable) return;
      writable = allowWrite;
      runQuery.update({ annotations: allowWrite ? WRITABLE_ANNOTATIONS : READ_ONLY_ANNOTATIONS });
    },
  };
  return queryTool;
}
