import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, type CliResult, TestHome } from '../helpers/hanactl-home.js';

/** Runs hanactl in a given working folder (VS Code's file is relative to it). */
function runIn(home: TestHome, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...home.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const FIXTURES = {
  'claude-desktop': {
    key: 'mcpServers',
    doc: { globalShortcut: 'Alt+Space', mcpServers: { files: { command: 'npx', args: ['-y', 'fs-server', '/tmp'] } } },
  },
  cursor: { key: 'mcpServers', doc: { mcpServers: { github: { url: 'https://example.test/mcp', headers: { a: 'b' } } } } },
  vscode: {
    key: 'servers',
    doc: { inputs: [{ id: 'pat', type: 'promptString' }], servers: { other: { type: 'stdio', command: 'other' } } },
  },
  'claude-code': { key: 'mcpServers', doc: { mcpServers: { other: { command: 'other', args: [] } } } },
} as const;

describe('hanactl mcp-config --write', () => {
  const home = new TestHome();
  const fakeHome = join(home.dir, 'person');
  mkdirSync(fakeHome);
  const env = { HOME: fakeHome, XDG_CONFIG_HOME: '' };
  afterAll(() => home.dispose());

  it.each(Object.entries(FIXTURES))(
    '%s: merges into a fixture file beside other servers, backs it up, and a second write changes nothing',
    async (client, { key, doc }) => {
      const dir = join(home.dir, `fixture-${client}`);
      mkdirSync(dir);
      const file = join(dir, 'config.json');
      const original = `${JSON.stringify(doc, null, 2)}\n`;
      writeFileSync(file, original);

      const first = await runIn(
        home,
        dir,
        ['mcp-config', '--client', client, '--connection', 'shop', '--write', '--config-file', 'config.json'],
        env,
      );
      expect(first.code, first.stderr).toBe(0);
      expect(first.stdout).toContain(`Added hanactl to ${file}`);
      const backups = readdirSync(dir).filter((f) => f.startsWith('config.json.bak-'));
      expect(backups).toHaveLength(1);
      expect(readFileSync(join(dir, backups[0] as string), 'utf8')).toBe(original);

      const written = JSON.parse(readFileSync(file, 'utf8'));
      const entry = written[key].hanactl;
      expect(entry.command).toMatch(/bin\/hanactl-mcp$/);
      expect(entry.args).toEqual(['--connection', 'shop']);
      expect(entry.env).toEqual({ HANACTL_NODE: process.execPath, HANACTL_HOME: home.dir });
      if (client === 'vscode') expect(entry.type).toBe('stdio');
      // Everything that was there is still there, unchanged.
      const { hanactl: _ours, ...others } = written[key];
      expect(others).toEqual((doc as Record<string, unknown>)[key]);
      expect({ ...written, [key]: undefined }).toEqual({ ...doc, [key]: undefined });

      const before = readFileSync(file, 'utf8');
      const second = await runIn(
        home,
        dir,
        ['mcp-config', '--client', client, '--connection', 'shop', '--write', '--config-file', 'config.json'],
        env,
      );
      expect(second.code, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/already has this hanactl entry; nothing changed/);
      expect(readFileSync(file, 'utf8')).toBe(before);
      expect(readdirSync(dir).filter((f) => f.startsWith('config.json.bak-'))).toHaveLength(1);
    },
  );

  it.each(Object.keys(FIXTURES))(
    '%s: refuses a file that is not valid JSON, naming the file and the fix, and leaves it untouched',
    async (client) => {
      const dir = join(home.dir, `broken-${client}`);
      mkdirSync(dir);
      const file = join(dir, 'config.json');
      // Comments and trailing commas are JSONC and accepted; a missing comma and brace are not.
      const text = '{\n  // a comment\n  "mcpServers": { "other": { "command": "x" } "more": 1,\n';
      writeFileSync(file, text);
      const result = await runIn(home, dir, ['mcp-config', '--client', client, '--write', '--config-file', file], env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(`${file} is not valid JSON`);
      expect(result.stderr).toMatch(
        /left it untouched.*Fix the file, or add the entry by hand: `[^`]*hanactl(?:\.js)? mcp-config --client/s,
      );
      expect(readFileSync(file, 'utf8')).toBe(text);
      expect(readdirSync(dir)).toEqual(['config.json']);
    },
  );

  it('writes each editor’s usual file when no --config-file is given', async () => {
    const project = join(home.dir, 'project');
    mkdirSync(project);
    for (const client of ['claude-desktop', 'cursor', 'vscode']) {
      const r = await runIn(home, project, ['mcp-config', '--client', client, '--write'], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^Created /);
    }
    expect(JSON.parse(readFileSync(join(fakeHome, '.config/Claude/claude_desktop_config.json'), 'utf8')).mcpServers.hanactl).toBeDefined();
    expect(JSON.parse(readFileSync(join(fakeHome, '.cursor/mcp.json'), 'utf8')).mcpServers.hanactl).toBeDefined();
    expect(JSON.parse(readFileSync(join(project, '.vscode/mcp.json'), 'utf8')).servers.hanactl.type).toBe('stdio');
  });

  it('for Claude Code without --config-file, prints `claude mcp add` and writes nothing', async () => {
    const r = await runIn(home, home.dir, ['mcp-config', '--client', 'claude-code', '--write', '--connection', 'shop'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^claude mcp add hanactl .*-- .*hanactl-mcp --connection shop/);
    expect(r.stderr).toMatch(/does not edit it/);
    expect(existsSync(join(fakeHome, '.claude.json'))).toBe(false);
  });

  it('refuses --config-file without --write as a usage error', async () => {
    const r = await runIn(home, home.dir, ['mcp-config', '--client', 'cursor', '--config-file', 'x.json'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/give --write too/);
  });
});
