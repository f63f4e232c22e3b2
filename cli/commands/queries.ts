import { cliCommand } from '../../shared/cli-command.js';
import { isHanactlError } from '../../shared/errors.js';
import { cancelQuery, listSessions, runningQueries } from '../../shared/operator-client.js';
import type { RunningQuery, SessionInfo } from '../../shared/schemas.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';

/** An age as a person reads it: `850 ms`, `12 s`, `4 min`, `3 h`. */
export function formatAge(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.round(ms / 100) / 10} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${Math.round(ms / 360_000) / 10} h`;
}

/** Runs a read against a running daemon; none running means nothing to show (never starts one). */
async function whenRunning<T>(ctx: CliContext, read: () => Promise<T>, empty: T): Promise<T> {
  try {
    return await read();
  } catch (err) {
    if (!isHanactlError(err) || err.code !== 'DAEMON_UNAVAILABLE') throw err;
    ctx.err('The daemon is not running.');
    return empty;
  }
}

/** `hanactl sessions [--json]`: the agent sessions talking to the daemon. */
export async function sessions(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const list = await whenRunning(ctx, () => listSessions(ctx.probe), { sessions: [] as SessionInfo[] });
  if (options.json) return printJson(ctx, list);
  if (list.sessions.length === 0) return ctx.out('No sessions.');
  const now = Date.now();
  ctx.out(
    renderTable(
      ['session', 'client', 'project', 'connection', 'calls', 'last seen'],
      list.sessions.map((s) => ({
        session: s.id.slice(0, 8),
        client: `${s.client.name}${s.client.version ? ` ${s.client.version}` : ''}`,
        project: s.project ?? '',
        connection: s.connection ?? '',
        calls: s.calls,
        'last seen': `${formatAge(now - Date.parse(s.lastSeenAt))} ago`,
      })),
    ),
  );
}

/** `hanactl queries [--json]`: the statements running now, oldest first. */
export async function queries(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const list = await whenRunning(ctx, () => runningQueries(ctx.probe), { queries: [] as RunningQuery[] });
  if (options.json) return printJson(ctx, list);
  if (list.queries.length === 0) return ctx.out('No statements are running.');
  ctx.out(
    renderTable(
      ['id', 'session', 'client', 'connection', 'age', 'sql'],
      list.queries.map((q) => ({
        id: q.id,
        session: q.session?.slice(0, 8) ?? '',
        client: q.client ?? '',
        connection: q.connection,
        age: `${formatAge(q.ageMs)}${q.cancelling ? ' (cancelling)' : ''}`,
        sql: q.sql.replace(/\s+/g, ' ').trim(),
      })),
    ),
  );
}

/** `hanactl cancel <query-id> [--json]`: cancels a running statement on the database server. */
export async function cancel(ctx: CliContext, id: string, options: { json?: boolean }): Promise<void> {
  const result = await cancelQuery(ctx.probe, id);
  if (options.json) return printJson(ctx, result);
  ctx.out(
    result.stopped
      ? `Cancelled ${id}: the statement stopped on the server.`
      : `Cancel sent to ${id}; the statement has not stopped yet. Check with \`${cliCommand()} queries\`.`,
  );
}
