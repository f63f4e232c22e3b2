import { Command, CommanderError, Option } from 'commander';
import { runnableHelp } from '../shared/cli-command.js';
import { ENGINES, engineSpec } from '../shared/engines.js';
import { isHanactlError } from '../shared/errors.js';
import { visible } from '../shared/terminal-text.js';
import { hanactlVersion } from '../shared/version.js';
import { type CliContext, createContext } from './context.js';
import { CliExit, EXIT } from './exit.js';
import { costOption, intOption } from './int-option.js';
import { registerOperatorCommands } from './operator-commands.js';

const USAGE_CODES = new Set(['INVALID_NAME', 'INVALID_URL', 'CONTEXT_INVALID']);

/** One line per engine for `hanactl add --help`: its example URL, its other schemes, how a file path is read. */
function urlHelp(): string {
  return ENGINES.map((engine) => {
    const { example, schemes, address } = engineSpec(engine);
    const others = schemes.slice(1).map((scheme) => `${scheme}:${address === 'server' ? '//' : ''}`);
    const notes = [
      ...(others.length > 0 ? [`also ${others.join(' ')}`] : []),
      ...(address === 'file' ? ['a relative path is resolved now'] : []),
    ];
    return `  ${example.padEnd(44)}${notes.length > 0 ? `(${notes.join('; ')})` : ''}`.trimEnd();
  }).join('\n');
}

/** Builds the argv layer; each action lazily imports its command so start-up stays fast. */
export function buildProgram(ctx: () => CliContext): Command {
  const program = new Command('hanactl')
    .description('A local database connection broker for AI agents: agents query, the broker holds the passwords.')
    .version(hanactlVersion())
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      runnableHelp(`
Examples:
  hanactl add shop postgres://app@localhost:5432/shop --password-stdin < pw.txt
  hanactl list
  hanactl mcp-config --client claude-code --connection shop
Exit codes: 0 ok, 1 failure, 2 usage.`),
    );
  program.exitOverride();
  const json = () => new Option('--json', 'print JSON');

  const daemon = program.command('daemon').description('start, stop and inspect the broker daemon');
  daemon
    .command('start')
    .description('start the daemon (in the background unless --foreground)')
    .option('--foreground', 'run in this terminal; logs still go to the log file')
    .option('--key-file', 'keep the registry key in a 0600 file beside the registry (for machines without a keychain; weaker)')
    .option('--audit-days <days>', 'keep audit records this many days (default 30; remembered for later starts)', intOption(1, 3650))
    .option(
      '--http [host:port]',
      'also serve MCP over HTTP on this address, e.g. 127.0.0.1:8765 (for every start: "http" in config.json); loopback only without TLS',
    )
    .option('--listen <host:port>', 'the MCP over HTTP address, for `--http --listen host:port`')
    .option('--oauth-issuer <url>', 'accept access tokens of this identity provider (issuer URL) on MCP over HTTP ("oauth" in config.json)')
    .option(
      '--oauth-audience <aud>',
      "the audience those tokens must be issued for: this broker's public MCP URL, e.g. https://db.example.com/mcp",
    )
    .option('--tls-cert <file>', 'serve MCP over HTTP with TLS: the certificate (PEM); required beyond loopback ("tls" in config.json)')
    .option('--tls-key <file>', 'the TLS private key (PEM) for --tls-cert')
    .addOption(json())
    .action(async (opts) => (await import('./commands/daemon.js')).start(ctx(), opts));
  daemon
    .command('stop')
    .description('finish in-flight calls, close pools and stop the daemon')
    .addOption(json())
    .action(async (opts) => (await import('./commands/daemon.js')).stop(ctx(), opts));
  daemon
    .command('status')
    .description('is the daemon running? which key source is in use? (exit 1 when not running)')
    .addOption(json())
    .action(async (opts) => (await import('./commands/daemon.js')).status(ctx(), opts));

  program
    .command('add <name> <url>')
    .description('register a connection (the password from a hidden prompt or --password-stdin, never an argument)')
    .option('--password-stdin', 'read the password from standard input')
    .option('--no-password', 'do not prompt for a password')
    .option('--description <text>', 'a note shown to agents in list_connections')
    .option('--allow-write', 'let agents run writes on this connection (default: read-only)')
    .option('--context <names>', 'context parameters this connection declares, e.g. CUSTOMER_ID,REGION')
    .option('--replace', 'replace a connection of the same name')
    .option('--no-test', 'save it without opening a connection first (it is tested by default)')
    .addOption(json())
    .addHelpText(
      'after',
      `
URLs:
${urlHelp()}`,
    )
    .action(async (name, url, opts) => (await import('./commands/connections.js')).add(ctx(), name, url, opts));
  program
    .command('set <name>')
    .description('change what only a person decides: write access, context parameters, description, result size')
    .option('--allow-write', 'let agents run writes on this connection')
    .option('--read-only', 'back to read-only (the default)')
    .option('--context <names>', 'declare context parameters, e.g. CUSTOMER_ID,REGION (replaces the list)')
    .option('--no-context', 'declare no context parameters')
    .option('--description <text>', 'a note shown to agents')
    .option(
      '--context-claim <NAME=claim>',
      "for signed-in callers, take the context value NAME from the access token's claim (repeatable); they cannot choose it on the URL",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--remove-context-claim <NAME>',
      'signed-in callers no longer get NAME from a claim (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--signed-context', 'sign context values for a verifying function in the database (PostgreSQL; see `hanactl context-sql`)')
    .option('--no-signed-context', 'stop signing context values')
    .option(
      '--max-result-bytes <bytes>',
      'the byte cap of one tool result on this connection (default 65536, 4096 to 4194304; "default" resets)',
      // The bounds of MIN/MAX_MAX_RESULT_BYTES in shared/schemas.ts, which the daemon checks again.
      (value: string) => (value === 'default' ? value : intOption(4096, 4 * 1024 * 1024)(value)),
    )
    .option('--curated-only', "offer this connection's sessions only its curated tools (no run_query)")
    .option('--no-curated-only', 'offer run_query again beside the curated tools')
    .option(
      '--max-cost <n>',
      'refuse reads whose plan estimate is above n, before they run (engine cost units; "none" clears; not on SQLite)',
      costOption,
    )
    .option('--no-max-cost', 'clear the cost limit')
    .option('--approve-writes', 'each write waits for a person: `hanactl approve|deny <query-id>` (needs --allow-write)')
    .option('--no-approve-writes', 'writes run without waiting for approval again')
    .option(
      '--approval-timeout <seconds>',
      'how long a write waits for a decision before it expires unrun (default 300; "default" resets)',
      (value: string) => (value === 'default' ? value : intOption(1, 86_400)(value)),
    )
    .addOption(json())
    .action(async (name, opts) => (await import('./commands/connections.js')).set(ctx(), name, opts));
  program
    .command('context-sql <name>')
    .description('print the SQL that installs the function verifying signed context values; it holds the signing key, so pipe it into psql')
    .option('--role <role>', "the role that may call the function (default: the connection URL's user)")
    .option('--schema <schema>', 'the schema of the function and its key table (default hanactl)')
    .option('--to-terminal', 'print even when standard output is a terminal (the key then shows on screen)')
    .addHelpText(
      'after',
      runnableHelp(`
Example (as the database owner; the key goes from hanactl to psql, never to the screen):
  hanactl context-sql shop | psql -U owner -d shop -v ON_ERROR_STOP=1`),
    )
    .action(async (name, opts) => (await import('./commands/connections.js')).contextSql(ctx(), name, opts));
  program
    .command('list')
    .alias('ls')
    .description('list registered connections (never a password)')
    .addOption(json())
    .action(async (opts) => (await import('./commands/connections.js')).list(ctx(), opts));
  program
    .command('remove <name>')
    .alias('rm')
    .description('remove a connection and close its pool')
    .addOption(json())
    .action(async (name, opts) => (await import('./commands/connections.js')).remove(ctx(), name, opts));
  program
    .command('test <name>')
    .description('open a connection and check that it answers')
    .addOption(json())
    .action(async (name, opts) => (await import('./commands/connections.js')).test(ctx(), name, opts));
  program
    .command('status')
    .description('the daemon, its pools and the sessions talking to it')
    .addOption(json())
    .action(async (opts) => (await import('./commands/status.js')).status(ctx(), opts));
  program
    .command('pools')
    .description('connection pools per target: total, idle, in use, waiting')
    .addOption(json())
    .action(async (opts) => (await import('./commands/status.js')).pools(ctx(), opts));
  program
    .command('audit')
    .description('the audit trail: every tool call, who made it, what ran and how it ended (never a parameter value)')
    .option('--session <id>', 'only this session')
    .option('--connection <name>', 'only this connection')
    .option('--since <when>', 'only records since an age (30m, 1h, 2d) or an ISO time')
    .option('--limit <n>', 'at most this many records (default 50)', intOption(1, 10_000))
    .option('--follow', 'then keep printing new records until Ctrl-C (with --json: one record per line)')
    .addOption(json())
    .action(async (opts) => (await import('./commands/audit.js')).audit(ctx(), opts));
  program
    .command('sessions')
    .description('the agent sessions talking to the daemon: client, project, active connection, calls, last seen')
    .addOption(json())
    .action(async (opts) => (await import('./commands/queries.js')).sessions(ctx(), opts));
  program
    .command('queries')
    .description('the statements running now (id, session, connection, age, SQL) and the writes waiting for approval, whole')
    .addOption(json())
    .action(async (opts) => (await import('./commands/queries.js')).queries(ctx(), opts));
  program
    .command('cancel <query-id>')
    .description('cancel a running statement on the database server (ids from `hanactl queries`)')
    .addOption(json())
    .action(async (id, opts) => (await import('./commands/queries.js')).cancel(ctx(), id, opts));
  program
    .command('approve <query-id>')
    .description('let a write that waits for approval run (ids from `hanactl queries`)')
    .addOption(json())
    .action(async (id, opts) => (await import('./commands/queries.js')).decide(ctx(), id, true, opts));
  program
    .command('deny <query-id>')
    .description('refuse a write that waits for approval; it never runs')
    .option('--reason <text>', 'why, told to the agent')
    .addOption(json())
    .action(async (id, opts) => (await import('./commands/queries.js')).decide(ctx(), id, false, opts));
  program
    .command('mcp')
    .description('run the MCP stdio server for one agent session (what an editor starts)')
    .option('--connection <name>', 'the connection active when the session starts')
    .option('--project <dir>', 'the project folder when the editor offers no MCP roots (default: the working folder)')
    .option('--conn-file <file>', 'a connection file for the project chain (as hana-cli --conn; read by the daemon, within trust)')
    .action(async (opts) => (await import('../shim/main.js')).runShim(opts));
  program
    .command('trust <dir>')
    .description('let the daemon read connection files inside a folder (as direnv allow); only a person can')
    .addOption(json())
    .action(async (dir, opts) => (await import('./commands/trust.js')).trust(ctx(), dir, opts));
  program
    .command('untrust <dir>')
    .description('stop reading connection files inside a folder')
    .addOption(json())
    .action(async (dir, opts) => (await import('./commands/trust.js')).untrust(ctx(), dir, opts));
  program
    .command('trusted')
    .description('list the trusted folders')
    .addOption(json())
    .action(async (opts) => (await import('./commands/trust.js')).trusted(ctx(), opts));
  program
    .command('explain-project <dir>')
    .description("show each source of a project's connection chain, tried in order, and why it was used or skipped")
    .option('--conn-file <file>', 'also try this connection file, as `hanactl mcp --conn-file` would')
    .addOption(json())
    .action(async (dir, opts) => (await import('./commands/projects.js')).explainProject(ctx(), dir, opts));
  program
    .command('import <dir>')
    .description("copy a project's connection (secret included) into the encrypted registry")
    .option('--as <name>', 'the registry name (default: <folder>-<name>)')
    .option('--connection <name>', "which project connection, e.g. project:db (default: the project's first)")
    .option('--conn-file <file>', 'also try this connection file')
    .option('--replace', 'replace a registry connection of the same name')
    .addOption(json())
    .action(async (dir, opts) => (await import('./commands/projects.js')).importProject(ctx(), dir, opts));
  program
    .command('mcp-config')
    .description('print the configuration that points an editor at hanactl')
    .addOption(
      new Option('--client <name>', 'the editor')
        .choices(['claude-code', 'claude-desktop', 'vscode', 'cursor', 'windsurf', 'gemini-cli', 'zed', 'codex', 'cline', 'continue'])
        .makeOptionMandatory(),
    )
    .option('--connection <name>', 'the connection the session starts with')
    .option(
      '--write',
      "merge the entry into the editor's config file (backed up first; other servers kept); for claude-code prints `claude mcp add` instead",
    )
    .option('--config-file <path>', 'with --write: the file to merge into, instead of the editor’s usual one')
    .addHelpText(
      'after',
      runnableHelp(`
Examples:
  hanactl mcp-config --client cursor --connection shop
  hanactl mcp-config --client claude-desktop --write
  hanactl mcp-config --client vscode --write          (.vscode/mcp.json in this folder)
  hanactl mcp-config --client claude-code --write --config-file .mcp.json`),
    )
    .action(async (opts) => (await import('./commands/mcp-config.js')).mcpConfig(ctx(), opts));
  program
    .command('demo')
    .description('run the daemon in the foreground with an embedded SQLite demo connection (npm start)')
    .action(async () => (await import('./commands/demo.js')).demo(ctx()));
  const token = program
    .command('token')
    .description('bearer tokens for MCP over HTTP (`hanactl daemon start --http 127.0.0.1:PORT`): create, list, revoke');
  token
    .command('create <label>')
    .description('create a token and print it once (the daemon keeps only its hash)')
    .option('--connection <name>', 'limit the token to this connection’s endpoint (/mcp/<name>)')
    .option(
      '--context <NAME=value>',
      'bind the token to this context value of its connection (repeatable; needs --connection); its holder cannot give NAME on the URL',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .addOption(json())
    .addHelpText(
      'after',
      runnableHelp('\nExamples:\n  hanactl token create laptop-agent --connection shop\n  curl -H "Authorization: Bearer $TOKEN" ...'),
    )
    .action(async (label, opts) => (await import('./commands/token.js')).create(ctx(), label, opts));
  token
    .command('list')
    .alias('ls')
    .description('list tokens: label, connection, created, last used (never the token)')
    .addOption(json())
    .action(async (opts) => (await import('./commands/token.js')).list(ctx(), opts));
  token
    .command('revoke <label>')
    .description('revoke a token; requests with it are refused from now on')
    .addOption(json())
    .action(async (label, opts) => (await import('./commands/token.js')).revoke(ctx(), label, opts));
  program
    .command('grant <connection> <principal>')
    .description("let signed-in callers of MCP over HTTP use a connection: a subject, a group or role, or '*' for every signed-in caller")
    .addOption(json())
    .action(async (connection, principal, opts) => (await import('./commands/grant.js')).grant(ctx(), connection, principal, opts));
  program
    .command('revoke <connection> <principal>')
    .description('take back a grant; requests of those callers are refused from the next one')
    .addOption(json())
    .action(async (connection, principal, opts) => (await import('./commands/grant.js')).revoke(ctx(), connection, principal, opts));
  program
    .command('grants')
    .description('list which signed-in callers may use which connection')
    .addOption(json())
    .action(async (opts) => (await import('./commands/grant.js')).list(ctx(), opts));
  const tools = program
    .command('tools')
    .description('curated tools: named, parameterized statements a connection offers agents as MCP tools');
  tools
    .command('import <connection> <file>')
    .description('declare curated tools from a YAML file (see docs/curated-tools.md)')
    .option('--replace', "replace the connection's curated tools with the file's")
    .addOption(json())
    .addHelpText(
      'after',
      `
File:
  tools:
    - name: orders_for_customer
      description: The latest orders of one customer, newest first.
      sql: SELECT id, total FROM orders WHERE customer_id = :customer_id ORDER BY id DESC LIMIT :limit
      parameters:
        - {name: customer_id, type: integer, description: The customer's id}
        - {name: limit, type: integer}`,
    )
    .action(async (connection, file, opts) => (await import('./commands/tools.js')).importTools(ctx(), connection, file, opts));
  tools
    .command('list [connection]')
    .alias('ls')
    .description('list curated tools, of one connection or all')
    .addOption(json())
    .action(async (connection, opts) => (await import('./commands/tools.js')).listTools(ctx(), connection, opts));
  tools
    .command('remove <connection> <name>')
    .alias('rm')
    .description('remove one curated tool from a connection')
    .addOption(json())
    .action(async (connection, name, opts) => (await import('./commands/tools.js')).removeTool(ctx(), connection, name, opts));
  registerOperatorCommands(program, ctx);
  return program;
}

/** The one top-level catch: maps errors to messages and exit codes. */
export async function main(argv: readonly string[]): Promise<void> {
  // `hanactl list | head`: a reader that stops early is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  let context: CliContext | undefined;
  const ctx = () => (context ??= createContext());
  const program = buildProgram(ctx);
  let code: number = EXIT.ok;
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (err) {
    code = exitCodeFor(err);
  } finally {
    context?.daemon.close();
    context?.probe.close();
  }
  if (code !== EXIT.ok) process.exitCode = code;
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    return err.exitCode === 0 ? EXIT.ok : EXIT.usage; // commander printed its own message
  }
  if (err instanceof CliExit) {
    if (err.message) process.stderr.write(`hanactl: ${err.message}\n`);
    return err.exitCode;
  }
  // The daemon's errors may quote what an agent sent (a statement, a client's name): shown escaped.
  if (isHanactlError(err)) {
    process.stderr.write(`hanactl: ${visible(err.message, { lines: true })}\n`);
    return USAGE_CODES.has(err.code) ? EXIT.usage : EXIT.failure;
  }
  process.stderr.write(`hanactl: unexpected error: ${visible(err instanceof Error ? err.message : String(err), { lines: true })}\n`);
  return EXIT.failure;
}
