import type { Command } from 'commander';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../cli/main.js';

interface Parsed {
  readonly path: string;
  readonly args: unknown[];
  readonly opts: Record<string, unknown>;
}

/**
 * The program with every action replaced by a recorder and output silenced: parsing is
 * exercised exactly as `hanactl` does it, and no command runs.
 */
function recorder(): { program: Command; parsed: () => Parsed | undefined } {
  const program = buildProgram(() => {
    throw new Error('argv tests build no context');
  });
  let parsed: Parsed | undefined;
  const walk = (cmd: Command, path: string[]) => {
    cmd.exitOverride();
    cmd.configureOutput({ writeOut: () => {}, writeErr: () => {} });
    if ((cmd as unknown as { _actionHandler?: unknown })._actionHandler) {
      cmd.action((...all: unknown[]) => {
        const self = all.at(-1) as Command;
        parsed = { path: path.join(' '), args: all.slice(0, -2), opts: self.opts() };
      });
    }
    for (const child of cmd.commands) walk(child, [...path, child.name()]);
  };
  walk(program, []);
  return { program, parsed: () => parsed };
}

async function parse(argv: string[]): Promise<Parsed> {
  const { program, parsed } = recorder();
  await program.parseAsync(argv, { from: 'user' });
  const result = parsed();
  if (!result) throw new Error(`no action ran for ${argv.join(' ')}`);
  return result;
}

async function usageError(argv: string[]): Promise<CommanderError> {
  const { program } = recorder();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err;
    throw err;
  }
  throw new Error(`expected a usage error for ${argv.join(' ')}`);
}

describe('argv of the operator commands', () => {
  it.each([
    [['doctor'], 'doctor', [], {}],
    [['doctor', '--json', '--timeout', '3'], 'doctor', [], { json: true, timeout: '3' }],
    [['key', 'rotate'], 'key rotate', [], {}],
    [['key', 'rotate', '--print-new-key', '--json'], 'key rotate', [], { printNewKey: true, json: true }],
    [['key', 'export', '--out', 'reg.json', '--passphrase-stdin'], 'key export', [], { out: 'reg.json', passphraseStdin: true }],
    [['key', 'export', '--out', 'reg.json', '--force'], 'key export', [], { out: 'reg.json', force: true }],
    [
      ['key', 'import', '--in', 'reg.json', '--force', '--key-file', '--print-new-key'],
      'key import',
      [],
      { in: 'reg.json', force: true, keyFile: true, printNewKey: true },
    ],
    [['daemon', 'install', '--dry-run'], 'daemon install', [], { dryRun: true }],
    [['daemon', 'install', '--platform', 'macos', '--json'], 'daemon install', [], { platform: 'macos', json: true }],
    [['daemon', 'uninstall', '--dry-run'], 'daemon uninstall', [], { dryRun: true }],
    [['daemon', 'logs'], 'daemon logs', [], {}],
    [['daemon', 'logs', '-f', '-n', '20'], 'daemon logs', [], { follow: true, lines: '20' }],
    [['daemon', 'logs', '--follow', '--lines', '5', '--json'], 'daemon logs', [], { follow: true, lines: '5', json: true }],
    [['completion', 'bash'], 'completion', ['bash'], {}],
    [['completion', 'fish'], 'completion', ['fish'], {}],
    [['mcp-config', '--client', 'vscode', '--write'], 'mcp-config', [], { client: 'vscode', write: true }],
    [
      ['mcp-config', '--client', 'cursor', '--write', '--config-file', 'x.json', '--connection', 'shop'],
      'mcp-config',
      [],
      { client: 'cursor', write: true, configFile: 'x.json', connection: 'shop' },
    ],
  ])('hanactl %j', async (argv, path, args, opts) => {
    const parsed = await parse(argv);
    expect(parsed.path).toBe(path);
    expect(parsed.args).toEqual(args);
    expect(parsed.opts).toEqual(opts);
  });

  it.each([
    [['key', 'export'], 'commander.missingMandatoryOptionValue'],
    [['key', 'import', '--passphrase-stdin'], 'commander.missingMandatoryOptionValue'],
    [['key', 'export', '--out', 'f.json', '--passphrase', 'hunter22'], 'commander.unknownOption'],
    [['key', 'rotate', '--new-key', 'x'], 'commander.unknownOption'],
    [['completion'], 'commander.missingArgument'],
    [['completion', 'powershell'], 'commander.invalidArgument'],
    [['daemon', 'install', '--platform', 'windows'], 'commander.invalidArgument'],
    [['daemon', 'logs', '--lines'], 'commander.optionMissingArgument'],
    [['doctor', 'extra'], 'commander.excessArguments'],
    [['mcp-config', '--client', 'emacs', '--write'], 'commander.invalidArgument'],
    [['mcp-config', '--write'], 'commander.missingMandatoryOptionValue'],
  ])('refuses hanactl %j as a usage error (%s), which main() maps to exit 2', async (argv, code) => {
    const err = await usageError(argv);
    expect(err.code).toBe(code);
    expect(err.exitCode).not.toBe(0);
  });

  it('gives every command it adds a --help with an example', () => {
    const { program } = recorder();
    const find = (path: string) =>
      path.split(' ').reduce<Command | undefined>((cmd, name) => cmd?.commands.find((c) => c.name() === name), program);
    for (const path of [
      'doctor',
      'key',
      'key rotate',
      'key export',
      'key import',
      'daemon install',
      'daemon uninstall',
      'daemon logs',
      'completion',
      'mcp-config',
    ]) {
      const cmd = find(path);
      expect(cmd, path).toBeDefined();
      let text = '';
      cmd?.configureOutput({ writeOut: (s) => (text += s), writeErr: (s) => (text += s) });
      cmd?.outputHelp();
      expect(text, path).toMatch(/Examples:\n {2}.*hanactl|Examples:\n {2}source/);
    }
  });
});
