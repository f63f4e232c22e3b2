import { chmodSync, constants, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { applyEdits, modify, type ParseError, parse, printParseErrorCode } from 'jsonc-parser';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import { contextNote, declaredContext, type McpClientName, mcpConfigText, type ServerEntry, serverEntry } from './mcp-config.js';

/** The server name hanactl's entry is kept under in every client's file. */
export const SERVER_NAME = 'hanactl';

export interface ConfigLocationOptions {
  readonly platform?: NodeJS.Platform;
  readonly env?: NodeJS.ProcessEnv;
  readonly home?: string;
  readonly cwd: string;
}

/**
 * Where a client reads its MCP servers from. Claude Code has none here on purpose: it keeps
 * them in ~/.claude.json, a large state file it rewrites while it runs, so hanactl does not
 * edit it; `claude mcp add` is the supported way (see `mcpConfig`).
 */
export function defaultConfigFile(client: McpClientName, options: ConfigLocationOptions): string | undefined {
  const platform = options.platform ?? process.platform;
  const env = options.env ?? process.env;
  const home = options.home ?? homedir();
  switch (client) {
    case 'claude-desktop':
      if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json');
      if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json');
      return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'Claude', 'claude_desktop_config.json');
    case 'cursor':
      return join(home, '.cursor', 'mcp.json');
    case 'vscode':
      return join(options.cwd, '.vscode', 'mcp.json');
    case 'windsurf':
      return join(home, '.codeium', 'windsurf', 'mcp_config.json');
    case 'gemini-cli':
      return join(home, '.gemini', 'settings.json');
    case 'zed':
      // Zed reads ~/.config/zed/settings.json on Linux and macOS alike ($XDG_CONFIG_HOME respected), %APPDATA%\Zed on Windows.
      if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Zed', 'settings.json');
      return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'zed', 'settings.json');
    case 'cline': {
      // Cline (a VS Code extension) keeps cline_mcp_settings.json in VS Code's global storage.
      const user =
        platform === 'darwin'
          ? join(home, 'Library', 'Application Support', 'Code', 'User')
          : platform === 'win32'
            ? join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Code', 'User')
            : join(env.XDG_CONFIG_HOME || join(home, '.config'), 'Code', 'User');
      return join(user, 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json');
    }
    case 'continue':
      // Continue reads JSON MCP configs (the mcpServers format) from .continue/mcpServers/ in the workspace.
      return join(options.cwd, '.continue', 'mcpServers', 'hanactl.json');
    case 'claude-code':
    case 'codex':
      return undefined;
  }
}

/** The top-level key a client keeps its servers under, and the entry as that client wants it. */
export function clientShape(client: McpClientName, entry: ServerEntry): { key: string; value: Record<string, unknown> } {
  if (client === 'vscode') return { key: 'servers', value: { type: 'stdio', ...entry } };
  return { key: client === 'zed' ? 'context_servers' : 'mcpServers', value: { ...entry } };
}

export interface WriteResult {
  readonly file: string;
  /** False when the file already held this exact entry: nothing was written. */
  readonly changed: boolean;
  readonly created: boolean;
  /** The previous entry was replaced (it pointed elsewhere or had other options). */
  readonly replaced: boolean;
  readonly backup?: string;
}

/**
 * Merges hanactl's entry into a client's JSON config file. Every other server and every other
 * key is kept as it was, and so are `MCP_CONTEXT_*` values added to hanactl's own entry; the old file is copied to `<file>.bak-<timestamp>` first; a file that
 * already holds the same entry is left alone (no write, no backup); a file that is not a JSON
 * object is refused untouched. A symlinked file is written through its link.
 */
export function writeServerEntry(path: string, client: McpClientName, entry: ServerEntry, now: Date = new Date()): WriteResult {
  const { key, value } = clientShape(client, entry);
  const file = existsSync(path) ? realpathSync(path) : path;
  const created = !existsSync(file);
  const original = created ? '' : readFileSync(file, 'utf8');
  const doc = created || original.trim() === '' ? {} : parseObject(file, original, client);
  const servers = doc[key] ?? {};
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new HanactlError('INVALID_REQUEST', `${file}: "${key}" is not a JSON object, so hanactl cannot add its server there; fix that key by hand and run this again.`);
  }
  const current = (servers as Record<string, unknown>)[SERVER_NAME];
  keepContextValues(current, value);
  if (current !== undefined && sameJson(current, value)) return { file, changed: false, created: false, replaced: false };

  // An edit of the one entry (jsonc-parser): comments, order and formatting elsewhere stay as they were.
  const indent = indentOf(original);
  const formattingOptions = { insertSpaces: indent !== '\t', tabSize: typeof indent === 'number' ? indent : indent.length, eol: '\n' };
  const base = original.trim() === '' ? '{}\n' : original;
  const edited = applyEdits(base, modify(base, [key, SERVER_NAME], value, { formattingOptions }));
  const text = edited.endsWith('\n') || original !== '' ? edited : `${edited}\n`;
  let backup: string | undefined;
  if (!created) {
    backup = `${file}.bak-${now.toISOString().replace(/[:.]/g, '-')}`;
    copyFileSync(file, backup, constants.COPYFILE_EXCL);
  }
  mkdirSync(dirname(file), { recursive: true });
  const tmp = join(dirname(file), `.${basename(file)}.hanactl-${process.pid}.tmp`);
  try {
    // A new file meant to be shared with a project (.vscode/mcp.json, .mcp.json) is 0644 like any
    // checked-in file; a personal one 0600. It never holds a secret either way; an existing file keeps its mode.
    const mode = created ? (isProjectFile(file) ? 0o644 : 0o600) : statSync(file).mode & 0o777;
    writeFileSync(tmp, text, { flag: 'wx', mode });
    chmodSync(tmp, mode);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return { file, changed: true, created, replaced: current !== undefined, ...(backup ? { backup } : {}) };
}

/**
 * Context values a person added to the existing entry (`MCP_CONTEXT_*` in its `env`) are
 * theirs, not hanactl's: they are carried into the new entry.
 */
function keepContextValues(current: unknown, next: Record<string, unknown>): void {
  const env = (current as { env?: unknown } | undefined)?.env;
  if (!env || typeof env !== 'object' || Array.isArray(env)) return;
  const kept = Object.entries(env as Record<string, unknown>).filter(([k, v]) => k.startsWith('MCP_CONTEXT_') && typeof v === 'string');
  if (kept.length > 0) next.env = { ...((next.env as Record<string, string> | undefined) ?? {}), ...Object.fromEntries(kept) };
}

/**
 * Reads an editor's config as JSONC (comments and trailing commas allowed, as VS Code and most
 * editors allow them); any other syntax error refuses the file untouched.
 */
function parseObject(file: string, text: string, client: McpClientName): Record<string, unknown> {
  const errors: ParseError[] = [];
  const parsed: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  const first = errors[0];
  if (first) {
    throw new HanactlError(
      'INVALID_REQUEST',
      `${file} is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); hanactl left it untouched. Fix the file, or add the entry by hand: \`${cliCommand()} mcp-config --client ${client}\` prints it.`,
    );
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new HanactlError('INVALID_REQUEST', `${file} does not hold a JSON object; hanactl left it untouched. Fix the file, or add the entry by hand: \`${cliCommand()} mcp-config --client ${client}\` prints it.`);
  }
  return parsed as Record<string, unknown>;
}

/** Config files that live in a project and are meant to be committed and shared. */
function isProjectFile(file: string): boolean {
  return basename(file) === '.mcp.json' || (basename(file) === 'mcp.json' && basename(dirname(file)) === '.vscode');
}

/** The indentation the file already uses (two spaces for a new file). */
function indentOf(text: string): string | number {
  const match = /\n([ \t]+)\S/.exec(text);
  return match?.[1] ?? 2;
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

const RESTART_HINT: Record<McpClientName, string> = {
  'claude-code': 'Start a new Claude Code session to load it.',
  'claude-desktop': 'Quit and reopen Claude Desktop to load it.',
  cursor: 'Reload Cursor (or toggle the server in its MCP settings) to load it.',
  vscode: 'VS Code offers to start the server when it sees the file; or run "MCP: List Servers".',
  windsurf: 'Press Refresh in Windsurf\'s MCP panel (or restart Windsurf) to load it.',
  'gemini-cli': 'Start Gemini CLI again; /mcp lists the server.',
  zed: 'Zed reloads its settings by itself; the server shows in the Agent Panel\'s settings.',
  codex: 'Start Codex again; /mcp lists the server.',
  cline: 'Cline loads it from its MCP Servers panel (Restart Server if it was running).',
  continue: 'Reload the VS Code or JetBrains window to let Continue load it.',
};

/** Why a client's file is not edited, and what to do instead. */
const NOT_EDITED: Partial<Record<McpClientName, string>> = {
  'claude-code':
    'Claude Code keeps its servers in ~/.claude.json, a state file it rewrites while it runs, so hanactl does not edit it. Run this instead (add --scope user to use hanactl in every project):',
  codex:
    'Codex keeps its servers in ~/.codex/config.toml, a TOML file hanactl does not edit (its comments and layout would not survive). Add this table to it (or run `codex mcp add`):',
};

/**
 * `hanactl mcp-config --client NAME --write [--config-file PATH]`. For Claude Code without
 * `--config-file` nothing is written: its `claude mcp add` command is printed instead.
 */
export async function writeMcpConfig(ctx: CliContext, options: { client: McpClientName; connection?: string; configFile?: string }): Promise<void> {
  const path = options.configFile ? resolve(ctx.cwd, options.configFile) : defaultConfigFile(options.client, { cwd: ctx.cwd });
  const names = await declaredContext(ctx, options.connection);
  if (names.length > 0 && options.connection) ctx.err(contextNote(options.connection, names));
  if (!path || options.client === 'codex') {
    ctx.err(NOT_EDITED[options.client] ?? `hanactl does not edit ${options.client}'s file; add this to it:`);
    ctx.out(mcpConfigText(options.client, options.connection, process.env, names));
    return;
  }
  const result = writeServerEntry(path, options.client, serverEntry(options.connection, process.env, names));
  if (!result.changed) {
    ctx.out(`${result.file} already has this hanactl entry; nothing changed.`);
    return;
  }
  const verb = result.created ? 'Created' : result.replaced ? 'Updated the hanactl entry in' : 'Added hanactl to';
  ctx.out(`${verb} ${result.file}${result.backup ? ` (the previous file is kept as ${result.backup})` : ''}.`);
  ctx.out(RESTART_HINT[options.client]);
}
