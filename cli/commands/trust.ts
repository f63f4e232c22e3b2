import { resolve } from 'node:path';
import { cliCommand } from '../../shared/cli-command.js';
import { listTrusted, trustFolder, untrustFolder } from '../../shared/project-client.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';

/**
 * `hanactl trust <dir>`: lets the daemon read connection files inside a folder (as direnv's
 * `allow`). Stored by real path in the encrypted registry; only this command line can add one.
 */
export async function trust(ctx: CliContext, dir: string, options: { json?: boolean }): Promise<void> {
  const result = await trustFolder(ctx.daemon, resolve(ctx.cwd, dir));
  if (options.json) return printJson(ctx, result);
  ctx.out(result.changed ? `Trusted ${result.path}.` : `${result.path} was trusted already.`);
  ctx.out(
    'hanactl now reads connection files inside it (.cdsrc-private.json, package.json, default-env.json, .env, ...) for agents working there.',
  );
  ctx.out(`See what it finds with: ${cliCommand()} explain-project ${result.path}`);
}

/** `hanactl untrust <dir>`. */
export async function untrust(ctx: CliContext, dir: string, options: { json?: boolean }): Promise<void> {
  const result = await untrustFolder(ctx.daemon, resolve(ctx.cwd, dir));
  if (options.json) return printJson(ctx, result);
  ctx.out(result.changed ? `${result.path} is no longer trusted.` : `${result.path} was not trusted.`);
}

/** `hanactl trusted [--json]`: the folders trusted so far. */
export async function trusted(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const folders = await listTrusted(ctx.daemon);
  if (options.json) return printJson(ctx, { trusted: folders });
  if (folders.length === 0) {
    ctx.out(`No folder is trusted yet. Trust a project with: ${cliCommand()} trust <dir>`);
    return;
  }
  ctx.out(
    renderTable(
      ['path', 'trusted since'],
      folders.map((f) => ({ path: f.path, 'trusted since': f.createdAt })),
    ),
  );
}
