import { Command, CommanderError, Option } from 'commander';
import { isHanactlError } from '../shared/errors.js';
import { hanactlVersion } from '../shared/version.js';
import { type CliContext, createContext } from './context.js';
import { CliExit, EXIT } from './exit.js';

const USAGE_CODES = new Set(['INVALID_NAME', 'INVALID_URL', 'CONTEXT_INVALID']);

/** Builds the argv layer; each action lazily imports its command so start-up stays fast. */
export function buildProgram(ctx: () => CliContext): Command {
  const program = new Command('hanactl')
    .description('A local database connection broker for AI agents: agents query, the broker holds the passwords.')
    .version(hanactlVersion())
    .showSuggestionAfterError()
    .addHelpText(
      'after',
      `
Examples:
  hanactl add shop postgres://app@localhost:5432/shop --password-stdin < pw.txt
  hanactl list
  hanactl mcp-config --client claude-code --connection shop
Exit codes: 0 ok, 1 failure, 2 usage.`,
    );
  program.exitOverride();
  const json = () => new Option('--json', 'print JSON');

  const daemon = program.command('daemon').description('start, stop and inspect the broker daemon');
  daemon
    .command('start')
    .description('start the daemon (in the background unless --foreground)')
    .option('--foreground', 'run in this terminal; logs still go to the log file')
    .option('--key-file', 'keep the registry key in a 0600 file beside the registry (for machines without a keychain; weaker)')
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
    .addOption(json())
    .addHelpText(
      'after',
      `
URLs:
  sqlite:./data.db                      (a relative path is resolved now)
  postgres://user@host:5432/db
  mysql://user@host:3306/db   mariadb://user@host:3306/db
  hana://user@host:30015/TENANT?encrypt=true`,
    )
    .action(async (name, url, opts) => (await import('./commands/connections.js')).add(ctx(), name, url, opts));
  program
    .command('set <name>')
    .description('change what only a person decides: write access, context parameters, description')
    .option('--allow-write', 'let agents run writes on this connection')
    .option('--read-only', 'back to read-only (the default)')
    .option('--context <names>', 'declare context parameters, e.g. CUSTOMER_ID,REGION (replaces the list)')
    .option('--no-context', 'declare no context parameters')
    .option('--description <text>', 'a note shown to agents')
    .addOption(json())
    .action(async (name, opts) => (await import('./commands/connections.js')).set(ctx(), name, opts));
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
    .command('mcp')
    .description('run the MCP stdio server for one agent session (what an editor starts)')
    .option('--connection <name>', 'the connection active when the session starts')
    .option('--project <dir>', 'the project folder (default: the working folder)')
    .action(async (opts) => (await import('../shim/main.js')).runShim(opts));
  program
    .command('mcp-config')
    .description('print the configuration that points an editor at hanactl')
    .addOption(new Option('--client <name>', 'the editor').choices(['claude-code', 'claude-desktop', 'vscode', 'cursor']).makeOptionMandatory())
    .option('--connection <name>', 'the connection the session starts with')
    .action(async (opts) => (await import('./commands/mcp-config.js')).mcpConfig(ctx(), opts));
  program
    .command('demo')
    .description('run the daemon in the foreground with an embedded SQLite demo connection (npm start)')
    .action(async () => (await import('./commands/demo.js')).demo(ctx()));
  return program;
}

/** The one top-level catch: maps errors to messages and exit codes. */
export async function main(argv: readonly string[]): Promise<void> {
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
  if (isHanactlError(err)) {
    process.stderr.write(`hanactl: ${err.message}\n`);
    return USAGE_CODES.has(err.code) ? EXIT.usage : EXIT.failure;
  }
  process.stderr.write(`hanactl: unexpected error: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.failure;
}
