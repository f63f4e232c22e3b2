import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import { renderTable } from '../../shared/text-table.js';
import { createToken, listTokens, revokeToken } from '../../shared/token-client.js';
import { type CliContext, printJson } from '../context.js';

/**
 * `hanactl token create <label> [--connection NAME]`: the token alone on stdout (so
 * `TOKEN=$(hanactl token create x)` works), how to use it on stderr. It is shown this once.
 */
export async function create(
  ctx: CliContext,
  label: string,
  options: { connection?: string; context?: readonly string[]; json?: boolean },
): Promise<void> {
  const context: Record<string, string> = {};
  for (const pair of options.context ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new HanactlError('INVALID_REQUEST', `--context takes NAME=value, e.g. CUSTOMER_ID=42; "${pair}" is not.`);
    context[pair.slice(0, eq).trim().toUpperCase()] = pair.slice(eq + 1);
  }
  const created = await createToken(ctx.daemon, {
    label,
    ...(options.connection ? { connection: options.connection } : {}),
    ...(Object.keys(context).length > 0 ? { context } : {}),
  });
  const unbound = await unboundContext(ctx, created.connection ?? undefined, created.context ?? []);
  if (options.json) return printJson(ctx, unbound.length > 0 ? { ...created, unboundContext: unbound } : created);
  for (const { connection, names } of unbound) {
    const list = names.join(', ');
    const example = names.map((n) => `--context ${n}=<value>`).join(' ');
    ctx.err(
      `Warning: "${connection}" separates rows by ${list}, and this token is not bound to ${names.length > 1 ? 'them' : 'it'}: its holder chooses ${list} on the URL (/mcp/${connection}?${names[0]}=...) and can read any caller's rows. To give it one caller's rows only, revoke it and create it again with \`--connection ${connection} ${example}\`.`,
    );
  }
  const bound = created.context?.length ? `, bound to its context values of ${created.context.join(', ')}` : '';
  const scope = `${created.connection ? `the connection "${created.connection}" only` : 'every connection'}${bound}`;
  ctx.err(
    `Token "${created.label}" created for ${scope}. It is shown this once; the daemon keeps only its hash. Clients send it as \`Authorization: Bearer <token>\`:`,
  );
  ctx.out(created.token);
}

/**
 * The context names of the connections a new token reaches that it is not bound to: whoever
 * holds it gives those values on the URL, so the connection's row separation is theirs to choose.
 */
async function unboundContext(
  ctx: CliContext,
  connection: string | undefined,
  bound: readonly string[],
): Promise<{ connection: string; names: string[] }[]> {
  const { connections } = await ctx.daemon.listConnections();
  return connections
    .filter((c) => connection === undefined || c.name === connection)
    .map((c) => ({ connection: c.name, names: c.context.filter((name) => !bound.includes(name)) }))
    .filter((c) => c.names.length > 0);
}

/** `hanactl token list [--json]`: labels, scopes and dates; never a token. */
export async function list(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const tokens = await listTokens(ctx.daemon);
  if (options.json) return printJson(ctx, { tokens });
  if (tokens.length === 0) {
    ctx.out(`No tokens. Create one with \`${cliCommand()} token create <label> [--connection NAME]\`.`);
    return;
  }
  const rows = tokens.map((t) => ({
    label: t.label,
    connection: t.connection ?? '(any)',
    created: t.createdAt,
    'last used': t.lastUsedAt ?? 'never',
  }));
  ctx.out(renderTable(['label', 'connection', 'created', 'last used'], rows));
}

/** `hanactl token revoke <label>`: requests with the token are refused (401) from now on. */
export async function revoke(ctx: CliContext, label: string, options: { json?: boolean }): Promise<void> {
  await revokeToken(ctx.daemon, label);
  if (options.json) return printJson(ctx, { revoked: label });
  ctx.out(`Token "${label}" revoked; requests that carry it are refused from now on.`);
}
