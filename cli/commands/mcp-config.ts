import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { hanactlBinPath } from '../../shared/auto-start.js';
import { installRoot } from '../../shared/install-root.js';
import { shellQuote } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { CliContext } from '../context.js';
import { CliExit, EXIT } from '../exit.js';

export const MCP_CLIENTS = ['claude-code', 'claude-desktop', 'vscode', 'cursor', 'windsurf', 'gemini-cli', 'zed', 'codex', 'cline', 'continue'] as const;
export type McpClientName = (typeof MCP_CLIENTS)[number];

export interface ServerEntry {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * The stdio server entry an editor needs, with absolute paths so PATH does not matter. On
 * POSIX it is bin/hanactl-mcp, which starts the shim from its startup snapshot when valid
 * (about half the start-up time of the full CLI) and falls back to `hanactl mcp` otherwise.
 */
export function serverEntry(connection: string | undefined, env: NodeJS.ProcessEnv = process.env, contextNames: readonly string[] = []): ServerEntry {
  const options = connection ? ['--connection', connection] : [];
  const launcher = join(installRoot(), 'bin', 'hanactl-mcp');
  const entry: ServerEntry =
    process.platform !== 'win32' && existsSync(launcher)
      ? { command: launcher, args: options, env: { HANACTL_NODE: process.execPath } }
      : { command: process.execPath, args: [hanactlBinPath(), 'mcp', ...options] };
  if (env.HANACTL_HOME) entry.env = { ...entry.env, HANACTL_HOME: env.HANACTL_HOME };
  // Emptied on purpose (the demo does): a key the editor's own environment may hold is not used; the home's key file is.
  if (env.HANACTL_REGISTRY_KEY === '') entry.env = { ...entry.env, HANACTL_REGISTRY_KEY: '' };
  // One placeholder per declared context parameter: without a value every call is refused.
  for (const name of contextNames) entry.env = { ...entry.env, [`MCP_CONTEXT_${name}`]: contextPlaceholder(name) };
  return entry;
}

/** The value written for a context parameter until a person puts this editor's own value there. */
export const contextPlaceholder = (name: string): string => `REPLACE-WITH-${name}`;

/**
 * The context parameters `connection` declares (a session must supply each as
 * `MCP_CONTEXT_<NAME>`); none when there is no connection or the daemon cannot say.
 */
export async function declaredContext(ctx: CliContext, connection: string | undefined): Promise<readonly string[]> {
  if (!connection) return [];
  try {
    return (await ctx.daemon.getConnection(connection)).context;
  } catch {
    return [];
  }
}

/** The sentence that goes with placeholders: what to replace, and why. */
export function contextNote(connection: string, names: readonly string[]): string {
  const vars = names.map((n) => `MCP_CONTEXT_${n}`).join(', ');
  return `"${connection}" declares context parameters (${names.join(', ')}): this config sets ${vars} to a placeholder (${contextPlaceholder(names[0] ?? 'NAME')}); replace each with this editor's value (a person's choice, fixed for the session).`;
}

/** The text to paste (or the command to run) for one client. */
export function mcpConfigText(
  client: string,
  connection: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  contextNames: readonly string[] = [],
): string {
  const entry = serverEntry(connection, env, contextNames);
  const name = 'hanactl';
  switch (client as McpClientName) {
    case 'claude-code': {
      const envArgs = Object.entries(entry.env ?? {}).map(([k, v]) => `-e ${k}=${shellQuote(v)} `).join('');
      return `claude mcp add ${name} ${envArgs}-- ${[entry.command, ...entry.args].map(shellQuote).join(' ')}`;
    }
    case 'claude-desktop':
    case 'cursor':
    case 'windsurf':
    case 'gemini-cli':
    case 'cline':
    case 'continue':
      return JSON.stringify({ mcpServers: { [name]: entry } }, null, 2);
    case 'zed':
      return JSON.stringify({ context_servers: { [name]: entry } }, null, 2);
    case 'codex':
      return codexToml(name, entry);
    case 'vscode':
      return JSON.stringify({ servers: { [name]: { type: 'stdio', ...entry } } }, null, 2);
    default:
      throw new HanactlError('INVALID_REQUEST', `Unknown client "${client}"; choose one of ${MCP_CLIENTS.join(', ')}.`);
  }
}


/**
 * Codex CLI's table in ~/.codex/config.toml. Written without a TOML library: every value is a
 * string or a list of strings, and a JSON string is a valid TOML basic string (same escapes);
 * keys are hanactl's and environment names, bare keys in TOML.
 */
function codexToml(name: string, entry: ServerEntry): string {
  const lines = [`[mcp_servers.${name}]`, `command = ${JSON.stringify(entry.command)}`, `args = [${entry.args.map((a) => JSON.stringify(a)).join(', ')}]`];
  const env = Object.entries(entry.env ?? {});
  if (env.length > 0) lines.push(`env = { ${env.map(([k, v]) => `${/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k)} = ${JSON.stringify(v)}`).join(', ')} }`);
  return lines.join('\n');
}

/** `hanactl mcp-config --client NAME [--connection NAME] [--write [--config-file PATH]]`. */
export async function mcpConfig(ctx: CliContext, options: { client: string; connection?: string; write?: boolean; configFile?: string }): Promise<void> {
  if (!options.write) {
    if (options.configFile) throw new CliExit(EXIT.usage, '--config-file names the file that --write merges into; give --write too.');
    const names = await declaredContext(ctx, options.connection);
    ctx.out(mcpConfigText(options.client, options.connection, process.env, names));
    if (names.length > 0 && options.connection) ctx.err(contextNote(options.connection, names));
  } else {
    const { writeMcpConfig } = await import('./mcp-config-write.js');
    await writeMcpConfig(ctx, options as { client: McpClientName; connection?: string; configFile?: string });
  }
  // What the editor needs for the daemon's key: said on every machine, warned where it would fail.
  const { adviceLines, keyAdvice } = await import('./key-advice.js');
  ctx.err(adviceLines(await keyAdvice(ctx.paths)));
}
