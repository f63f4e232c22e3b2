import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { expect, it } from 'vitest';
import type { CliContext } from '../../../cli/context.js';
import { buildProgram } from '../../../cli/main.js';
import { REPO } from '../../helpers/hanactl-home.js';

const doc = readFileSync(join(REPO, 'docs/cli.md'), 'utf8');

/** Every command `hanactl --help` and its sub-commands list, with its long options. */
function commands(command: Command, path: string[] = []): { path: string; options: string[] }[] {
  return command.commands
    .filter((c) => c.name() !== 'help')
    .flatMap((c) => {
      const here = [...path, c.name()];
      const options = c.options.map((o) => o.long).filter((o): o is string => o !== undefined && o !== '--json');
      return [{ path: here.join(' '), options }, ...commands(c, here)];
    });
}

const program = buildProgram(() => ({}) as CliContext);
const all = commands(program);

it('finds the commands of --help', () => {
  expect(all.map((c) => c.path)).toEqual(expect.arrayContaining(['add', 'daemon start', 'token create', 'key rotate', 'mcp-config']));
});

it.each(all.map((c) => [c.path, c.options] as const))('docs/cli.md documents `hanactl %s` and its options', (path, options) => {
  expect(doc, `hanactl ${path}`).toContain(`hanactl ${path}`);
  for (const option of options) expect(doc, `hanactl ${path} ${option}`).toContain(option);
});
