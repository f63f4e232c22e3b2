import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'jsonc-parser';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, TestHome } from '../helpers/hanactl-home.js';

/** Windsurf, Gemini CLI, Zed and Codex CLI, each in the format its own documentation gives. */
describe('mcp-config for more clients', () => {
  const home = new TestHome({ extraEnv: { XDG_CONFIG_HOME: '' } });
  afterAll(() => home.dispose());

  it('Zed: merges context_servers into a commented settings.json (found under $XDG_CONFIG_HOME), keeping the rest', async () => {
    const config = join(home.dir, 'xdg');
    const file = join(config, 'zed', 'settings.json');
    spawnSync('mkdir', ['-p', join(config, 'zed')]);
    writeFileSync(
      file,
      '// my settings\n{\n  "theme": "One Dark", // dark\n  "context_servers": { "other": { "command": "x", "args": [] } },\n}\n',
    );
    const r = await home.ok(['mcp-config', '--client', 'zed', '--connection', 'shop', '--write'], { env: { XDG_CONFIG_HOME: config } });
    expect(r.stdout).toContain(`Added hanactl to ${file}`);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('// my settings');
    expect(text).toContain('// dark');
    const doc = parse(text);
    expect(doc.theme).toBe('One Dark');
    expect(Object.keys(doc.context_servers)).toEqual(['other', 'hanactl']);
    expect(doc.context_servers.hanactl).toMatchObject({
      command: expect.stringMatching(/\/bin\/hanactl-mcp$/),
      args: ['--connection', 'shop'],
    });
  });

  it.each([
    ['windsurf', 'mcp_config.json'],
    ['gemini-cli', 'settings.json'],
  ])('%s: merges mcpServers into its file, keeping its other settings', async (client, name) => {
    const file = join(home.dir, `${client}-${name}`);
    writeFileSync(file, JSON.stringify({ theme: 'GitHub' }));
    await home.ok(['mcp-config', '--client', client, '--write', '--config-file', file]);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc.theme).toBe('GitHub');
    expect(doc.mcpServers.hanactl.command).toMatch(/\/bin\/hanactl-mcp$/);
    const printed = JSON.parse((await home.ok(['mcp-config', '--client', client])).stdout);
    expect(printed.mcpServers.hanactl).toEqual(doc.mcpServers.hanactl);
  });

  it('Continue: writes .continue/mcpServers/hanactl.json in the current folder; Cline: its settings file in VS Code global storage', async () => {
    const work = join(home.dir, 'work');
    spawnSync('mkdir', ['-p', work]);
    const run = (args: string[], env: NodeJS.ProcessEnv = {}) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: work, env: { ...home.env, ...env } });
        let stdout = '';
        child.stdout.on('data', (d) => (stdout += d));
        child.on('close', (code) => resolve({ code, stdout }));
      });
    expect((await run(['mcp-config', '--client', 'continue', '--write'])).code).toBe(0);
    const continueFile = JSON.parse(readFileSync(join(work, '.continue', 'mcpServers', 'hanactl.json'), 'utf8'));
    expect(continueFile.mcpServers.hanactl.command).toMatch(/\/bin\/hanactl-mcp$/);
    const config = join(home.dir, 'xdg-cline');
    expect((await run(['mcp-config', '--client', 'cline', '--write'], { XDG_CONFIG_HOME: config })).code).toBe(0);
    const clineFile = join(config, 'Code', 'User', 'globalStorage', 'saoudrizwan.claude-dev', 'settings', 'cline_mcp_settings.json');
    expect(JSON.parse(readFileSync(clineFile, 'utf8')).mcpServers.hanactl).toEqual(continueFile.mcpServers.hanactl);
  });

  it('Codex CLI: prints a [mcp_servers.hanactl] table that is valid TOML, and --write edits nothing', async () => {
    const printed = await home.ok(['mcp-config', '--client', 'codex', '--connection', 'shop']);
    expect(printed.stdout).toMatch(
      /^\[mcp_servers\.hanactl\]\ncommand = ".*\/bin\/hanactl-mcp"\nargs = \["--connection", "shop"\]\nenv = \{ HANACTL_NODE = ".+", HANACTL_HOME = ".+" \}\n$/,
    );
    const toml = spawnSync('python3', ['-c', 'import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))'], {
      input: printed.stdout,
      encoding: 'utf8',
    });
    if (toml.status === 0) {
      expect(JSON.parse(toml.stdout).mcp_servers.hanactl).toEqual({
        command: expect.stringMatching(/\/bin\/hanactl-mcp$/),
        args: ['--connection', 'shop'],
        env: { HANACTL_NODE: process.execPath, HANACTL_HOME: home.dir },
      });
    }
    const written = await home.ok([
      'mcp-config',
      '--client',
      'codex',
      '--connection',
      'shop',
      '--write',
      '--config-file',
      join(home.dir, 'config.toml'),
    ]);
    expect(written.stderr).toMatch(/hanactl does not edit.*Add this table to it \(or run `codex mcp add`\)/s);
    expect(written.stdout).toBe(printed.stdout);
    expect(existsSync(join(home.dir, 'config.toml'))).toBe(false);
  });
});
