import { Argument, type Command, Option } from 'commander';
import { runnableHelp } from '../shared/cli-command.js';
import type { CliContext } from './context.js';

const json = () => new Option('--json', 'print JSON');
const examples = (...lines: string[]) => runnableHelp(`\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`);

/**
 * The operator's commands: `doctor`, `key rotate|export|import`, `daemon install|uninstall|logs`
 * and `completion`. Kept apart from main.ts's own list; each action imports its command lazily.
 */
export function registerOperatorCommands(program: Command, ctx: () => CliContext): void {
  program
    .command('doctor')
    .description('check the installation and the set-up, one line per check with what to do next (exit 1 when one fails)')
    .option('--timeout <seconds>', 'how long each connection test and the keychain may take (default 10)')
    .addOption(json())
    .addHelpText('after', examples('hanactl doctor', 'hanactl doctor --timeout 3 --json'))
    .action(async (opts) => (await import('./commands/doctor.js')).doctor(ctx(), opts));

  const key = program
    .command('key')
    .description('rotate, export and import the registry key')
    .addHelpText('after', examples('hanactl key rotate', 'hanactl key export --out hanactl-registry.json', 'hanactl key import --in hanactl-registry.json'));
  key
    .command('rotate')
    .description('re-encrypt the registry under a new key (done by the daemon; the old key stops working)')
    .option('--print-new-key', 'print the new key once (required when the key comes from HANACTL_REGISTRY_KEY, which hanactl cannot change)')
    .addOption(json())
    .addHelpText('after', examples('hanactl key rotate', 'hanactl key rotate --print-new-key    # with HANACTL_REGISTRY_KEY: store the printed key, restart with it'))
    .action(async (opts) => (await import('./commands/key.js')).rotate(ctx(), opts));
  key
    .command('export')
    .description('write the registry and its key, wrapped by a passphrase you type, to one file (to move to another machine)')
    .requiredOption('--out <file>', 'the file to write (mode 0600)')
    .option('--passphrase-stdin', 'read the passphrase from standard input instead of a hidden prompt')
    .option('--force', 'overwrite the file if it exists')
    .addOption(json())
    .addHelpText('after', examples('hanactl key export --out ~/hanactl-registry.json', "printf '%s' \"$PASSPHRASE\" | hanactl key export --out reg.json --passphrase-stdin"))
    .action(async (opts) => (await import('./commands/key.js')).exportKey(ctx(), opts));
  key
    .command('import')
    .description('install a registry exported with `hanactl key export`, its key in this machine’s key source (the daemon must be stopped)')
    .requiredOption('--in <file>', 'the export file')
    .option('--passphrase-stdin', 'read the passphrase from standard input instead of a hidden prompt')
    .option('--force', 'replace an existing registry (its connections are lost)')
    .option('--key-file', 'keep the key in a 0600 file beside the registry (machines without a keychain; weaker)')
    .option('--print-new-key', 'with HANACTL_REGISTRY_KEY as the key source: print the imported key once, to set it')
    .addOption(json())
    .addHelpText('after', examples('hanactl key import --in ~/hanactl-registry.json', 'hanactl key import --in reg.json --passphrase-stdin --key-file < passphrase.txt'))
    .action(async (opts) => (await import('./commands/key.js')).importKey(ctx(), opts));

  const daemon = program.commands.find((c) => c.name() === 'daemon');
  if (!daemon) throw new Error('hanactl: the daemon command must be registered before the operator commands');
  const platform = () => new Option('--platform <name>', 'the service manager to write for (default: this system’s)').choices(['linux', 'macos']);
  daemon
    .command('install')
    .description('run the daemon as a service: a systemd user unit (Linux) or a launchd agent (macOS), enabled and started')
    .option('--dry-run', 'print the unit without writing it or running anything')
    .addOption(platform())
    .addOption(json())
    .addHelpText('after', examples('hanactl daemon install --dry-run', 'hanactl daemon install', 'systemctl --user status hanactl.service'))
    .action(async (opts) => (await import('./commands/daemon-service.js')).install(ctx(), opts));
  daemon
    .command('uninstall')
    .description('stop and remove the service written by `hanactl daemon install`')
    .option('--dry-run', 'say what would be done without doing it')
    .addOption(platform())
    .addOption(json())
    .addHelpText('after', examples('hanactl daemon uninstall'))
    .action(async (opts) => (await import('./commands/daemon-service.js')).uninstall(ctx(), opts));
  daemon
    .command('logs')
    .description('print the daemon log readably: time, level, message, fields')
    .option('-f, --follow', 'keep printing new lines until Ctrl-C')
    .option('-n, --lines <n>', 'how many of the last lines to print (default 50)')
    .option('--json', 'print the raw JSON lines')
    .addHelpText('after', examples('hanactl daemon logs', 'hanactl daemon logs --follow', 'hanactl daemon logs --lines 200 --json | jq .msg'))
    .action(async (opts) => (await import('./commands/daemon-logs.js')).logs(ctx(), opts));

  program
    .command('completion')
    .description('print a shell completion script')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      examples(
        'source <(hanactl completion bash)',
        'hanactl completion zsh > "$' + '{fpath[1]}/_hanactl"',
        'hanactl completion fish > ~/.config/fish/completions/hanactl.fish',
      ),
    )
    .action(async (shell) => (await import('./commands/completion.js')).completion(ctx(), shell, program));
}
