import { userInfo } from 'node:os';
import { cliCommand } from '../../shared/cli-command.js';
import { isHanactlError } from '../../shared/errors.js';
import { cancelQuery, decideWrite, listSessions, runningQueries } from '../../shared/operator-client.js';
import type { RunningQuery, SessionInfo } from '../../shared/schemas.js';
import { ESCAPED_NOTE, hasHidden, oneLine, visible } from '../../shared/terminal-text.js';
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
        // The name and version the agent's client gave itself, and its folder: shown escaped.
        client: visible(`${s.client.name}${s.client.version ? ` ${s.client.version}` : ''}`),
        project: visible(s.project ?? ''),
        connection: visible(s.connection ?? ''),
        calls: s.calls,
        'last seen': `${formatAge(now - Date.parse(s.lastSeenAt))} ago`,
      })),
    ),
  );
}

/**
 * `hanactl queries [--json]`: the statements running now, oldest first, then the writes waiting
 * for a person, each with its whole statement, who asked, and how long is left.
 */
export async function queries(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const list = await whenRunning(ctx, () => runningQueries(ctx.probe), { queries: [] as RunningQuery[] });
  if (options.json) return printJson(ctx, list);
  const running = list.queries.filter((q) => !q.awaitingApproval);
  const waiting = list.queries.filter((q) => q.awaitingApproval);
  if (running.length === 0 && waiting.length === 0) return ctx.out('No statements are running.');
  if (running.length > 0) {
    ctx.out(
      renderTable(
        ['id', 'session', 'client', 'connection', 'age', 'sql'],
        running.map((q) => ({
          id: q.id,
          session: q.session?.slice(0, 8) ?? '',
          client: visible(q.client ?? ''),
          connection: visible(q.connection),
          age: `${formatAge(q.ageMs)}${q.cancelling ? ' (cancelling)' : ''}`,
          sql: oneLine(q.sql),
        })),
      ),
    );
  }
  if (waiting.length === 0) return;
  if (running.length > 0) ctx.out('');
  ctx.out(`${waiting.length === 1 ? 'A write waits' : `${waiting.length} writes wait`} for a person's approval:`);
  for (const q of waiting) {
    const left = q.awaitingApproval ? formatAge(q.awaitingApproval.leftMs) : '';
    const who = [q.client ? visible(q.client) : '', q.session ? `session ${q.session.slice(0, 8)}` : ''].filter(Boolean).join(', ');
    ctx.out('');
    ctx.out(`${q.id}  on ${visible(q.connection)}${who ? `, asked by ${who}` : ''}${q.tool ? ` (${q.tool})` : ''}; ${left} left`);
    // Each line on its own, indented, every control shown as an escape: nothing can move back over
    // what is printed, so the person sees the whole statement that would run, and its values.
    for (const line of visible(q.sql, { lines: true }).split('\n')) ctx.out(`    ${line}`);
    for (const [i, value] of (q.params ?? []).entries()) ctx.out(`    parameter ${i + 1}: ${visible(value)}`);
    if (hasHidden(q.sql, { lines: true })) ctx.out(`    (${ESCAPED_NOTE})`);
  }
  ctx.out('');
  ctx.out(`Approve with \`${cliCommand('approve <id>')}\`, deny with \`${cliCommand('deny <id> [--reason text]')}\`.`);
}

/** `hanactl approve <query-id>` / `hanactl deny <query-id> [--reason text]`: a person's decision on a waiting write. */
export async function decide(ctx: CliContext, id: string, approve: boolean, options: { reason?: string; json?: boolean }): Promise<void> {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    user = undefined;
  }
  const result = await decideWrite(ctx.probe, id, approve, {
    ...(user ? { user } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
  });
  if (options.json) return printJson(ctx, result);
  const sql = oneLine(result.sql);
  const params = (result.params ?? []).map((value, i) => `; parameter ${i + 1}: ${visible(value)}`).join('');
  const shown = `${sql.length > 120 ? `${sql.slice(0, 120)}…` : sql}${params}`;
  const where = visible(result.connection);
  ctx.out(approve ? `Approved ${id} on ${where}: it runs now. (${shown})` : `Denied ${id} on ${where}: it will not run. (${shown})`);
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
