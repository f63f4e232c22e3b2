import { resolve } from 'node:path';
import { cliCommand } from '../../shared/cli-command.js';
import { hanaCliFromEnv } from '../../shared/hana-cli-env.js';
import { detectProject, importProjectConnection } from '../../shared/project-client.js';
import type { DetectResult } from '../../shared/project-schemas.js';
import { visible } from '../../shared/terminal-text.js';
import { type CliContext, printJson } from '../context.js';

export interface ExplainOptions {
  readonly json?: boolean;
  readonly connFile?: string;
}

/** The detection as a person reads it: the root, then every source tried and why. */
export function explainText(result: DetectResult): string {
  const lines = [`Project ${result.root}${result.cap.isCap ? ` (CAP: ${result.cap.signals.join(', ')})` : ''}`];
  lines.push(`Root markers: ${result.markers.length > 0 ? result.markers.join(', ') : 'none (the folder itself is the root)'}`);
  lines.push('', 'Sources, in order (the first that yields a connection is used):');
  result.sources.forEach((s, i) => {
    lines.push(`${String(i + 1).padStart(2)}. ${s.source}: ${s.status}${s.file ? ` (${s.file})` : ''}`);
    lines.push(`    ${s.reason}`);
  });
  lines.push('');
  if (result.connections.length === 0) lines.push('Connections: none; agents here use their configured connection.');
  else lines.push(`Connections: ${result.connections.map((c) => `${c.name} (${c.engine})${c.primary ? ' [first]' : ''}`).join(', ')}`);
  return lines.join('\n');
}

/**
 * `hanactl explain-project <dir>`: each source of the chain, tried in order, and why it was used
 * or skipped. The caller's own `VCAP_SERVICES`, when set, stands for the shim's.
 */
export async function explainProject(ctx: CliContext, dir: string, options: ExplainOptions): Promise<void> {
  const vcap = process.env.VCAP_SERVICES;
  const hanaCli = hanaCliFromEnv(process.env);
  const result = await detectProject(ctx.daemon, {
    path: resolve(ctx.cwd, dir),
    ...(options.connFile ? { connFile: options.connFile } : {}),
    ...(vcap ? { vcapServices: vcap } : {}),
    ...(hanaCli ? { hanaCli } : {}),
  });
  if (options.json) return printJson(ctx, result);
  // Names and reasons come from the folder's files, which an agent may have written: shown escaped.
  ctx.out(visible(explainText(result), { lines: true }));
}

export interface ImportOptions {
  readonly as?: string;
  readonly connection?: string;
  readonly connFile?: string;
  readonly replace?: boolean;
  readonly json?: boolean;
}

/**
 * `hanactl import <dir> [--as NAME] [--connection project:NAME]`: copies a project connection,
 * secret included, into the encrypted registry (daemon to daemon: the secret never reaches this
 * process). It is then an ordinary, read-only registry connection.
 */
export async function importProject(ctx: CliContext, dir: string, options: ImportOptions): Promise<void> {
  const connection =
    options.connection && !options.connection.startsWith('project:') ? `project:${options.connection}` : options.connection;
  const info = await importProjectConnection(ctx.daemon, {
    path: resolve(ctx.cwd, dir),
    ...(connection ? { connection } : {}),
    ...(options.as ? { as: options.as } : {}),
    ...(options.connFile ? { connFile: options.connFile } : {}),
    ...(options.replace ? { replace: true } : {}),
  });
  if (options.json) return printJson(ctx, info);
  ctx.out(`Imported "${info.name}" (${info.engine}, read-only): ${info.url}`);
  ctx.out(`Check it with: ${cliCommand()} test ${info.name}`);
}
