import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { installRoot } from './install-root.js';

/** A word as a POSIX shell reads it back unchanged. */
export function shellQuote(s: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const realpathOr = (path: string): string | undefined => {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
};

/**
 * How a person runs this installation's CLI, for the commands hanactl prints: `hanactl` when
 * the `hanactl` on PATH is this very installation (a global or linked install), else
 * `node <absolute path>/bin/hanactl.js`, which works from any folder of a clone. With
 * HANACTL_HOME set, it is named in front, so the command reaches the same home from another
 * terminal.
 */
export function hanactlCommand(env: NodeJS.ProcessEnv = process.env): string {
  const bin = join(installRoot(), 'bin', 'hanactl.js');
  const self = realpathOr(bin);
  const onPath = (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => self !== undefined && realpathOr(join(dir, 'hanactl')) === self);
  const home = env.HANACTL_HOME ? `HANACTL_HOME=${shellQuote(realpathOr(env.HANACTL_HOME) ?? env.HANACTL_HOME)} ` : '';
  return `${home}${onPath ? 'hanactl' : `node ${shellQuote(bin)}`}`;
}

const made = new Map<string, string>();

/**
 * A hanactl command line for a person to run, as printed in advice and errors:
 * `cliCommand('daemon start')` is `hanactl daemon start` when that is this installation on
 * PATH, else `node /abs/path/bin/hanactl.js daemon start`, with this process's HANACTL_HOME in
 * front when set. The daemon and the relay print it too, for the person behind the agent: they
 * run from the same installation and home as the CLI that reaches them.
 */
export function cliCommand(args = '', env: NodeJS.ProcessEnv = process.env): string {
  const key = `${env.PATH ?? ''}\0${env.HANACTL_HOME ?? ''}`;
  let command = made.get(key);
  if (command === undefined) {
    command = hanactlCommand(env);
    made.set(key, command);
  }
  return args ? `${command} ${args}` : command;
}

/**
 * Help text whose example lines (`hanactl ...` at a line's start or after a pipe) name this
 * installation as `cliCommand` does; the completion examples keep `hanactl`, the name their
 * scripts complete. For commander's `addHelpText`, which calls it when the help is shown.
 */
export function runnableHelp(text: string): () => string {
  return () => text.replace(/(^|\n {2}|\| )hanactl (?!completion)/g, (_m, lead: string) => `${lead}${cliCommand()} `);
}
