import type { McpServer, RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { CuratedCallArgs, CuratedParam, CuratedToolInfo } from '../shared/curated.js';
import { DEFAULT_MAX_ROWS } from '../shared/schemas.js';
import type { Broker } from './broker.js';
import { withProgress } from './progress.js';
import { projectScope } from './project-scope.js';
import { renderQueryResult } from './render.js';
import type { SessionState } from './session-state.js';
import { guarded, ok } from './tool-result.js';
import { approvalNote, WriteApproval } from './write-approval.js';

function argSchema(p: CuratedParam): z.ZodType {
  const base = p.type === 'string' ? z.string() : p.type === 'integer' ? z.number().int() : p.type === 'number' ? z.number() : z.boolean();
  return p.description ? base.describe(p.description) : base;
}

const READ = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
const WRITE = { readOnlyHint: false, destructiveHint: true, openWorldHint: false };

/**
 * The active connection's curated tools, as MCP tools of this session: each under its declared
 * name, its input schema from the declared types. When the active connection changes, or a
 * person changes its tools or settings, the set is swapped and the SDK sends
 * `notifications/tools/list_changed`. On a curated-only connection the tools of free access
 * (run_query, explain_query, sample_rows) are not offered.
 */
export function registerCuratedTools(
  server: McpServer,
  daemon: Broker,
  state: SessionState,
  freeAccess: readonly RegisteredTool[],
): { sync(): Promise<void> } {
  const registered = new Map<string, RegisteredTool>();
  let shown = JSON.stringify({ tools: [], curatedOnly: false, connection: null });
  let syncing: Promise<void> = Promise.resolve();

  const register = (connection: string, tool: CuratedToolInfo) =>
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: Object.fromEntries(tool.parameters.map((p) => [p.name, argSchema(p)])),
        annotations: tool.kind === 'write' ? WRITE : READ,
      },
      (args: Record<string, unknown>, extra) =>
        guarded(async () => {
          const { session, project } = await projectScope(state);
          const approval = new WriteApproval(server, extra.requestId, state.approvalInClient);
          const result = await withProgress(
            extra,
            (seconds) => approval.progress() ?? `${tool.name} on "${connection}" is still running (${seconds} s).`,
            () =>
              daemon.callCurated(
                {
                  connection,
                  tool: tool.name,
                  args: args as CuratedCallArgs,
                  ...(session ? { session } : {}),
                  ...(project ? { project } : {}),
                  ...(Object.keys(state.context).length > 0 ? { context: state.context } : {}),
                },
                extra.signal,
                approval.hooks,
              ),
          );
          const { columns, rows, rowCount, truncated, cut } = result;
          return ok(`${approvalNote(result)}${renderQueryResult(result, DEFAULT_MAX_ROWS)}`, {
            columns,
            rows,
            rowCount,
            truncated,
            ...(cut ? { cut } : {}),
          });
        }),
    );

  const apply = async () => {
    const connection = state.active;
    const { tools, curatedOnly } = await daemon.curatedTools(connection).catch(() => ({ tools: [], curatedOnly: false }));
    const next = JSON.stringify({ tools: tools.map(({ createdAt: _c, offered: _o, ...t }) => t), curatedOnly, connection });
    if (next === shown) return;
    shown = next;
    for (const tool of registered.values()) tool.remove();
    registered.clear();
    for (const tool of tools) registered.set(tool.name, register(connection as string, tool));
    for (const tool of freeAccess) {
      if (curatedOnly === tool.enabled) {
        if (curatedOnly) tool.disable();
        else tool.enable();
      }
    }
  };
  const sync = () => {
    syncing = syncing.then(apply, apply);
    return syncing;
  };
  const unsubscribe = daemon.onCuratedChange?.((connection) => {
    if (connection === state.active) void sync();
  });
  state.watch(() => void sync());
  const closed = server.server.onclose;
  server.server.onclose = () => {
    unsubscribe?.();
    closed?.();
  };
  return { sync };
}
