import { cliCommand } from '../../shared/cli-command.js';
import { addGrant, listGrants, removeGrant } from '../../shared/grant-client.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';

const who = (principal: string) => (principal === '*' ? 'every signed-in caller' : `"${principal}"`);

/** `hanactl grant <connection> <principal>`: signed-in callers matching the principal may use the connection. */
export async function grant(ctx: CliContext, connection: string, principal: string, options: { json?: boolean }): Promise<void> {
  const change = await addGrant(ctx.daemon, { connection, principal });
  if (options.json) return printJson(ctx, change);
  ctx.out(
    `${change.changed ? 'Granted' : 'Already granted'}: ${who(principal)} may use the connection "${connection}" over MCP over HTTP.`,
  );
}

/** `hanactl revoke <connection> <principal>`: from the next request on, refused. */
export async function revoke(ctx: CliContext, connection: string, principal: string, options: { json?: boolean }): Promise<void> {
  const change = await removeGrant(ctx.daemon, { connection, principal });
  if (options.json) return printJson(ctx, change);
  ctx.out(
    change.changed
      ? `Revoked: ${who(principal)} may no longer use the connection "${connection}".`
      : `There was no grant of "${connection}" to ${who(principal)}.`,
  );
}

/** `hanactl grants [--json]`. */
export async function list(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const grants = await listGrants(ctx.daemon);
  if (options.json) return printJson(ctx, { grants });
  if (grants.length === 0) {
    ctx.out(`No grants: signed-in callers may use no connection. Give one with \`${cliCommand()} grant <connection> <subject-or-group>\`.`);
    return;
  }
  ctx.out(
    renderTable(
      ['connection', 'principal', 'created'],
      grants.map((g) => ({ connection: g.connection, principal: g.principal, created: g.createdAt })),
    ),
  );
}
