import { mkdirSync } from 'node:fs';
import { readConfig, writeConfig } from '../../shared/config.js';
import { isHanactlError } from '../../shared/errors.js';
import { auditRecords } from '../../shared/operator-client.js';
import type { AuditQuery, AuditRecord } from '../../shared/schemas.js';
import { parseSince } from '../../shared/since.js';
import { oneLine, visible, visibleJson } from '../../shared/terminal-text.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';

export interface AuditOptions {
  readonly session?: string;
  readonly connection?: string;
  readonly since?: string;
  readonly limit?: number;
  readonly follow?: boolean;
  readonly json?: boolean;
  /** How often `--follow` asks for new records. */
  readonly pollMillis?: number;
}

const COLUMNS = ['time', 'session', 'client', 'connection', 'tool', 'outcome', 'rows', 'ms', 'statement'] as const;
const STATEMENT_CHARS = 80;

/**
 * One record as a table row: local time, short session id, the outcome with its code or rule. What
 * the agent's side chose (the statement, the client's name, the values a person decided on) is
 * shown with its control and format characters escaped.
 */
function row(r: AuditRecord): Record<(typeof COLUMNS)[number], string> {
  const at = new Date(r.at);
  const pad = (n: number) => String(n).padStart(2, '0');
  const sql = oneLine(r.statement);
  const params = (r.approval?.params ?? []).map((value, i) => `; parameter ${i + 1}: ${visible(value)}`).join('');
  const statement = `${sql.length > STATEMENT_CHARS ? `${sql.slice(0, STATEMENT_CHARS)}…` : sql}${params}`;
  return {
    time: `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())} ${pad(at.getHours())}:${pad(at.getMinutes())}:${pad(at.getSeconds())}`,
    session: r.session?.slice(0, 8) ?? '',
    // A signed-in caller's subject follows the client: `claude-code 1.2 as alice`; --json has the issuer too.
    client: visible(
      `${r.client ? `${r.client}${r.clientVersion ? ` ${r.clientVersion}` : ''}` : ''}${r.subject ? `${r.client ? ' ' : ''}as ${r.subject}` : ''}`,
    ),
    connection: visible(r.connection),
    tool: visible(r.tool ?? ''),
    outcome: `${r.outcome === 'ok' ? 'ok' : r.outcome === 'refused' ? `refused ${r.rule ?? ''}`.trim() : `error ${r.errorCode ?? ''}`.trim()}${approvalText(r)}`,
    rows: r.rows === null ? '' : `${r.rows}${r.truncated ? '+' : ''}`,
    ms: String(Math.round(r.durationMs)),
    statement,
  };
}

/**
 * A write that awaited a person: `, approved by cli (alice)`, `, denied in the MCP client (Claude Code)`,
 * `, expired`. An answer to elicitation is the client's word, under the name it gave itself.
 */
function approvalText(r: AuditRecord): string {
  const a = r.approval;
  if (!a) return '';
  const who = !a.by
    ? ''
    : a.by === 'elicitation'
      ? ` in the MCP client (${a.who ?? 'unnamed'})`
      : ` by ${a.by}${a.who ? ` (${a.who})` : ''}`;
  return visible(`, ${a.decision}${who}`);
}

/** Column widths when following: fixed, so lines printed over time stay aligned (the statement runs on). */
const FOLLOW_WIDTHS = [19, 8, 20, 16, 14, 28, 6, 7];

function fixed(cells: Record<(typeof COLUMNS)[number], string>): string {
  return COLUMNS.map((c, i) => cells[c].padEnd(FOLLOW_WIDTHS[i] ?? 0))
    .join('  ')
    .trimEnd();
}

function filters(options: AuditOptions): AuditQuery {
  let since: string | undefined;
  if (options.since !== undefined) {
    try {
      since = parseSince(options.since).toISOString();
    } catch (err) {
      throw new CliExit(EXIT.usage, isHanactlError(err) ? err.message : String(err));
    }
  }
  return {
    ...(options.session ? { session: options.session } : {}),
    ...(options.connection ? { connection: options.connection } : {}),
    ...(since ? { since } : {}),
    ...(options.limit ? { limit: options.limit } : {}),
  };
}

/**
 * `hanactl audit [--session ID] [--connection NAME] [--since 1h|30m|2d|ISO] [--limit N] [--follow] [--json]`:
 * the newest records, oldest first. `--follow` then polls and prints new records until Ctrl-C
 * (with `--json`, one JSON record per line).
 */
export async function audit(ctx: CliContext, options: AuditOptions): Promise<void> {
  const query = filters(options);
  const { records } = await auditRecords(ctx.daemon, query);
  if (!options.follow) {
    if (options.json) return printJson(ctx, { records });
    ctx.out(records.length === 0 ? 'No audit records match.' : renderTable(COLUMNS, records.map(row)));
    return;
  }
  const print = (r: AuditRecord) => ctx.out(options.json ? visibleJson(JSON.stringify(r)) : fixed(row(r)));
  if (!options.json) ctx.out(fixed(Object.fromEntries(COLUMNS.map((c) => [c, c])) as Record<(typeof COLUMNS)[number], string>));
  records.forEach(print);
  await follow(ctx, query, records.at(-1)?.id ?? 0, print, options.pollMillis ?? 1000);
}

/** Polls for records after `lastId` until SIGINT or SIGTERM; then returns (exit 0). */
async function follow(ctx: CliContext, query: AuditQuery, lastId: number, print: (r: AuditRecord) => void, pollMs: number): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const { since: _since, limit: _limit, ...rest } = query;
  let after = lastId;
  try {
    while (!stop.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        stop.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      if (stop.signal.aborted) break;
      const { records } = await auditRecords(ctx.daemon, { ...rest, after, limit: 1000 });
      records.forEach(print);
      after = records.at(-1)?.id ?? after;
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** `hanactl daemon start --audit-days N`: remembered in the config, so every later start keeps it. */
export function rememberAuditDays(ctx: CliContext, days: number): void {
  mkdirSync(ctx.paths.home, { recursive: true, mode: 0o700 });
  const config = readConfig(ctx.paths.config);
  if (config.auditDays !== days) writeConfig(ctx.paths.config, { ...config, auditDays: days });
}
