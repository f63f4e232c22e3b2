import { cliCommand } from '../../shared/cli-command.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { type Engine, engineSpec } from '../../shared/engines.js';
import { HanactlError } from '../../shared/errors.js';
import { assertConnectionName } from '../../shared/names.js';
import { DEFAULT_APPROVAL_TIMEOUT_SECONDS, DEFAULT_MAX_RESULT_BYTES } from '../../shared/schemas.js';
import { renderTable } from '../../shared/text-table.js';
import { type CliContext, printJson } from '../context.js';
import { promptHidden, readPasswordFromStdin } from '../password.js';
import { progressLine } from '../style.js';

export interface AddOptions {
  readonly passwordStdin?: boolean;
  readonly password?: boolean;
  readonly description?: string;
  readonly allowWrite?: boolean;
  readonly context?: string;
  readonly replace?: boolean;
  /** false with --no-test: saved without opening a connection first. */
  readonly test?: boolean;
  readonly json?: boolean;
}

/** `hanactl add <name> <url>`: the password from stdin or a hidden prompt, never argv. */
export async function add(ctx: CliContext, name: string, url: string, options: AddOptions): Promise<void> {
  assertConnectionName(name);
  const parsed = parseConnectionUrl(url, ctx.cwd);
  let password = parsed.password;
  if (password !== undefined) {
    ctx.err('warning: the URL holds a password; it may now be in your shell history. Prefer --password-stdin or the prompt.');
  }
  const fileEngine = engineSpec(parsed.target.engine).address === 'file';
  const asks = password === undefined && options.password !== false && !fileEngine;
  if (options.passwordStdin) {
    password = await readPasswordFromStdin(ctx.stdin);
  } else if (asks && !ctx.stdin.isTTY) {
    // Storing no password because nobody could be asked would only fail later, at the first call.
    throw new HanactlError(
      'INVALID_REQUEST',
      `Standard input is not a terminal, so hanactl cannot ask for the password of "${name}". Pipe it with --password-stdin (e.g. \`${cliCommand()} add ${name} <url> --password-stdin < pw.txt\`), or pass --no-password for a user that has none.`,
    );
  } else if (asks) {
    const typed = await promptHidden(
      `Password for ${parsed.target.user ?? 'the user'}@${parsed.target.host} (empty for none): `,
      ctx.stdin,
      process.stderr,
    );
    if (typed !== '') password = typed;
  }
  // Send the URL without its password; the password travels in its own field.
  const cleanUrl = fileEngine
    ? `${engineSpec(parsed.target.engine).schemes[0]}:${parsed.target.path}${query(parsed.target.options)}`
    : url.replace(/(\/\/[^:/@]*):[^@]*@/, '$1@');
  const testing = options.test !== false;
  const progress = testing && !options.json ? progressLine(process.stderr, `Testing the connection to "${name}"…`) : undefined;
  const info = await ctx.daemon
    .addConnection({
      name,
      url: cleanUrl,
      ...(password !== undefined ? { password } : {}),
      ...(options.description ? { description: options.description } : {}),
      ...(options.allowWrite ? { allowWrite: true } : {}),
      ...(options.context ? { context: options.context.split(',').filter((s) => s.trim() !== '') } : {}),
      ...(options.replace ? { replace: true } : {}),
      ...(testing ? { test: true } : {}),
    })
    .finally(() => progress?.done());
  for (const advice of info.advice ?? []) ctx.err(`warning: ${advice}`);
  warnContext(ctx, info);
  if (options.json) return printJson(ctx, info);
  ctx.out(`Added "${info.name}" (${info.engine}, ${info.allowWrite ? 'read-write' : 'read-only'}): ${info.url}`);
  ctx.out(testing ? 'The connection test passed.' : `Saved untested; check it with: ${cliCommand()} test ${info.name}`);
}

/** Warns a person who declared context names on an engine that cannot keep callers apart with them (its `contextWarning`). */
function warnContext(ctx: CliContext, info: { readonly name: string; readonly engine: Engine; readonly context: readonly string[] }): void {
  const warning = engineSpec(info.engine).contextWarning;
  if (warning && info.context.length > 0) ctx.err(warning(info.name));
}

function query(options: Readonly<Record<string, string>>): string {
  const q = new URLSearchParams(options).toString();
  return q ? `?${q}` : '';
}

/** `hanactl list`: every connection, never a password. */
export async function list(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const { connections } = await ctx.daemon.listConnections();
  if (options.json) return printJson(ctx, { connections });
  if (connections.length === 0) {
    ctx.out(`No connections yet. Add one with: ${cliCommand()} add <name> <url>`);
    return;
  }
  const rows = connections.map((c) => ({
    name: c.name,
    engine: c.engine,
    access: c.allowWrite ? `read-write${c.approveWrites ? ' (writes approved)' : ''}` : 'read-only',
    context: c.context.join(','),
    url: c.url,
    description: c.description ?? '',
  }));
  ctx.out(renderTable(['name', 'engine', 'access', 'context', 'url', 'description'], rows));
}

export interface SetOptions {
  readonly allowWrite?: boolean;
  readonly readOnly?: boolean;
  readonly context?: string | false;
  readonly description?: string;
  /** `default` goes back to the default cap. */
  readonly maxResultBytes?: number | 'default';
  readonly signedContext?: boolean;
  /** Sessions get only the connection's curated tools (`--curated-only`, `--no-curated-only`). */
  readonly curatedOnly?: boolean;
  /** The plan cost above which reads are refused; `false` (`--no-max-cost`, `--max-cost none`) clears it. */
  readonly maxCost?: number | false;
  /** Each write waits for a person (`--approve-writes`, `--no-approve-writes`). */
  readonly approveWrites?: boolean;
  /** `default` goes back to the default wait. */
  readonly approvalTimeout?: number | 'default';
  /** `NAME=claim` pairs (`--context-claim`, repeatable). */
  readonly contextClaim?: readonly string[];
  /** Names whose claim mapping goes (`--remove-context-claim`, repeatable). */
  readonly removeContextClaim?: readonly string[];
  readonly json?: boolean;
}

/** `--context-claim NAME=claim` and `--remove-context-claim NAME` as one change; undefined when neither is given. */
function contextClaimChanges(options: SetOptions): Record<string, string | null> | undefined {
  if (!options.contextClaim?.length && !options.removeContextClaim?.length) return undefined;
  const changes: Record<string, string | null> = {};
  for (const pair of options.contextClaim ?? []) {
    const eq = pair.indexOf('=');
    const name = eq < 0 ? '' : pair.slice(0, eq).trim();
    const claim = eq < 0 ? '' : pair.slice(eq + 1).trim();
    if (name === '' || claim === '')
      throw new HanactlError('INVALID_REQUEST', `--context-claim takes NAME=claim, e.g. CUSTOMER_ID=customer_id; "${pair}" is not.`);
    changes[name.toUpperCase()] = claim;
  }
  for (const name of options.removeContextClaim ?? []) changes[name.trim().toUpperCase()] = null;
  return changes;
}

/** `hanactl set <name>`: what only a person decides — write access, context names, description, result cap. */
export async function set(ctx: CliContext, name: string, options: SetOptions): Promise<void> {
  if (options.allowWrite && options.readOnly)
    throw new HanactlError('INVALID_REQUEST', 'Give either --allow-write or --read-only, not both.');
  const changes = {
    ...(options.allowWrite ? { allowWrite: true } : {}),
    ...(options.readOnly ? { allowWrite: false } : {}),
    ...(options.context === false ? { context: [] } : {}),
    ...(typeof options.context === 'string' ? { context: options.context.split(',').filter((s) => s.trim() !== '') } : {}),
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.maxResultBytes !== undefined
      ? { maxResultBytes: options.maxResultBytes === 'default' ? null : options.maxResultBytes }
      : {}),
    ...(options.signedContext !== undefined ? { signedContext: options.signedContext } : {}),
    ...(options.curatedOnly !== undefined ? { curatedOnly: options.curatedOnly } : {}),
    ...(options.maxCost !== undefined ? { maxCost: options.maxCost === false ? null : options.maxCost } : {}),
    ...(options.approveWrites !== undefined ? { approveWrites: options.approveWrites } : {}),
    ...(options.approvalTimeout !== undefined
      ? { approvalTimeoutSeconds: options.approvalTimeout === 'default' ? null : options.approvalTimeout }
      : {}),
  };
  const contextClaims = contextClaimChanges(options);
  if (contextClaims) Object.assign(changes, { contextClaims });
  if (Object.keys(changes).length === 0) {
    throw new HanactlError(
      'INVALID_REQUEST',
      'Nothing to change; give --allow-write, --read-only, --context N1,N2, --no-context, --context-claim NAME=claim, --remove-context-claim NAME, --description, --max-result-bytes, --[no-]signed-context, --[no-]curated-only, --max-cost <n>|--no-max-cost, --[no-]approve-writes or --approval-timeout.',
    );
  }
  const info = await ctx.daemon.updateConnection(name, changes);
  if (typeof options.context === 'string') warnContext(ctx, info);
  if (options.json) return printJson(ctx, info);
  const scoped = info.context.length > 0 ? `, context ${info.context.join(',')}` : '';
  const cap = `, tool results up to ${info.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES} bytes`;
  const claims = Object.entries(info.contextClaims ?? {});
  const fromClaims = claims.length > 0 ? ` (for signed-in callers ${claims.map(([n, c]) => `${n} from the claim ${c}`).join(', ')})` : '';
  const signed = info.signedContext ? ', context values signed' : '';
  const curated = info.curatedOnly ? ', curated-only (its sessions get its curated tools, not run_query)' : '';
  const cost = info.maxCost !== undefined ? `, reads over plan cost ${info.maxCost} refused` : '';
  const wait = info.approvalTimeoutSeconds ?? DEFAULT_APPROVAL_TIMEOUT_SECONDS;
  const approval = info.approveWrites
    ? info.allowWrite
      ? `, each write waits for a person's approval (up to ${wait} s; \`${cliCommand('queries')}\`, \`${cliCommand('approve <id>')}\`)`
      : ', write approval set but without effect while read-only'
    : '';
  ctx.out(
    `"${info.name}" is now ${info.allowWrite ? 'read-write' : 'read-only'}${scoped}${fromClaims}${signed}${cap}${curated}${cost}${approval}.`,
  );
  if (options.approvalTimeout !== undefined && !info.approveWrites) {
    ctx.err(
      `The approval timeout is kept, but writes on "${info.name}" do not wait for approval until \`${cliCommand(`set ${info.name} --approve-writes`)}\`.`,
    );
  }
  if (options.signedContext === true) {
    ctx.err(
      `Install the verifying function once, as the database owner: ${cliCommand()} context-sql ${info.name} | psql -U <owner> -d <database> -v ON_ERROR_STOP=1`,
    );
  }
}

export interface ContextSqlOptions {
  readonly role?: string;
  readonly schema?: string;
  readonly toTerminal?: boolean;
}

/**
 * `hanactl context-sql <name>`: the SQL installing the function that verifies signed context
 * values. It holds the connection's signing key, so it goes to standard output only when that is
 * not a terminal (a pipe into psql), unless the person asks for the screen.
 */
export async function contextSql(ctx: CliContext, name: string, options: ContextSqlOptions): Promise<void> {
  if (process.stdout.isTTY && !options.toTerminal) {
    throw new HanactlError(
      'INVALID_REQUEST',
      `The SQL holds "${name}"'s context signing key, so hanactl does not print it to a terminal. Pipe it into psql as the database owner (${cliCommand()} context-sql ${name} | psql -U <owner> -d <database> -v ON_ERROR_STOP=1), or pass --to-terminal to see it.`,
    );
  }
  const { sql } = await ctx.daemon.contextSql(name, {
    ...(options.role ? { role: options.role } : {}),
    ...(options.schema ? { schema: options.schema } : {}),
  });
  ctx.err('warning: this SQL holds the context signing key; run it as the database owner and keep no copy of it.');
  ctx.out(sql.trimEnd());
}

/** `hanactl remove <name>`. */
export async function remove(ctx: CliContext, name: string, options: { json?: boolean }): Promise<void> {
  await ctx.daemon.removeConnection(name);
  if (options.json) return printJson(ctx, { removed: name });
  ctx.out(`Removed "${name}".`);
}

/** `hanactl test <name>`: opens a connection and proves it answers. */
export async function test(ctx: CliContext, name: string, options: { json?: boolean }): Promise<void> {
  const progress = progressLine(process.stderr, `Testing "${name}"…`);
  let result: Awaited<ReturnType<typeof ctx.daemon.testConnection>>;
  try {
    result = await ctx.daemon.testConnection(name);
  } finally {
    progress.done();
  }
  for (const advice of result.advice ?? []) ctx.err(`warning: ${advice}`);
  if (options.json) return printJson(ctx, result);
  ctx.out(`"${name}" answers in ${result.latencyMs} ms${result.serverVersion ? ` (${result.serverVersion})` : ''}.`);
}
