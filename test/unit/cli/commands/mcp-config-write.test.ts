import { chmodSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { McpClientName, ServerEntry } from '../../../../cli/commands/mcp-config.js';
import { defaultConfigFile, writeServerEntry } from '../../../../cli/commands/mcp-config-write.js';
import { HanactlError } from '../../../../shared/errors.js';
import { tempFolders } from '../../../helpers/temp-dir.js';

const { folder } = tempFolders('hanactl-mcp-write-');

const entry: ServerEntry = {
  command: '/opt/hanactl/bin/hanactl-mcp',
  args: ['--connection', 'shop'],
  env: { HANACTL_NODE: '/usr/bin/node' },
};
const when = new Date('2025-01-02T03:04:05.678Z');

describe('where each client keeps its servers', () => {
  it.each([
    ['claude-desktop', 'linux', {}, '/home/ada/.config/Claude/claude_desktop_config.json'],
    ['claude-desktop', 'linux', { XDG_CONFIG_HOME: '/xdg' }, '/xdg/Claude/claude_desktop_config.json'],
    ['claude-desktop', 'darwin', {}, '/home/ada/Library/Application Support/Claude/claude_desktop_config.json'],
    ['cursor', 'linux', {}, '/home/ada/.cursor/mcp.json'],
    ['vscode', 'linux', {}, '/work/project/.vscode/mcp.json'],
    ['claude-code', 'linux', {}, undefined],
  ] as const)('%s on %s %j', (client, platform, env, expected) => {
    expect(defaultConfigFile(client, { platform, env, home: '/home/ada', cwd: '/work/project' })).toBe(expected);
  });
});

describe('writeServerEntry', () => {
  const fixtures: [McpClientName, string, Record<string, unknown>][] = [
    ['claude-desktop', 'mcpServers', { globalShortcut: 'Ctrl+Space', mcpServers: { files: { command: 'npx', args: ['fs-server'] } } }],
    ['cursor', 'mcpServers', { mcpServers: { github: { url: 'https://example.test/mcp' } } }],
    ['vscode', 'servers', { inputs: [{ id: 'token', type: 'promptString' }], servers: { other: { type: 'stdio', command: 'other' } } }],
    ['claude-code', 'mcpServers', { numStartups: 4, projects: { '/x': {} }, mcpServers: { other: { command: 'x' } } }],
  ];

  it.each(fixtures)('%s: merges beside other servers and keys, backs up, is idempotent', (client, key, fixture) => {
    const dir = folder();
    const file = join(dir, 'config.json');
    const original = `${JSON.stringify(fixture, null, 2)}\n`;
    writeFileSync(file, original);

    const first = writeServerEntry(file, client, entry, when);
    expect(first).toMatchObject({ file, changed: true, created: false, replaced: false, backup: `${file}.bak-2025-01-02T03-04-05-678Z` });
    expect(readFileSync(first.backup as string, 'utf8')).toBe(original);
    const written = JSON.parse(readFileSync(file, 'utf8'));
    const expected = client === 'vscode' ? { type: 'stdio', ...entry } : entry;
    expect(written).toEqual({ ...fixture, [key]: { ...(fixture[key] as object), hanactl: expected } });
    expect(Object.keys(written)).toEqual(Object.keys(fixture));

    const again = writeServerEntry(file, client, entry, new Date('2025-02-02T00:00:00Z'));
    expect(again).toEqual({ file, changed: false, created: false, replaced: false });
    expect(readdirSync(dir).sort()).toEqual(['config.json', 'config.json.bak-2025-01-02T03-04-05-678Z']);
  });

  it('replaces an older hanactl entry and says so', () => {
    const file = join(folder(), 'mcp.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { hanactl: { command: '/old/path', args: [] }, x: { command: 'x' } } }));
    const result = writeServerEntry(file, 'cursor', entry, when);
    expect(result).toMatchObject({ changed: true, replaced: true });
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers).toEqual({ hanactl: entry, x: { command: 'x' } });
  });

  it('keeps MCP_CONTEXT_ values a person added to the hanactl entry', () => {
    const file = join(folder(), 'mcp.json');
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { hanactl: { ...entry, env: { ...entry.env, MCP_CONTEXT_CUSTOMER_ID: 'C-1', OTHER: 'x' } } } }),
    );
    const updated = { ...entry, args: ['--connection', 'other'] };
    expect(writeServerEntry(file, 'cursor', updated, when)).toMatchObject({ changed: true, replaced: true });
    expect(JSON.parse(readFileSync(file, 'utf8')).mcpServers.hanactl.env).toEqual({ ...entry.env, MCP_CONTEXT_CUSTOMER_ID: 'C-1' });
    expect(writeServerEntry(file, 'cursor', updated, when).changed).toBe(false);
  });

  it('treats a key-order difference as the same entry', () => {
    const file = join(folder(), 'mcp.json');
    writeFileSync(file, JSON.stringify({ mcpServers: { hanactl: { env: entry.env, args: entry.args, command: entry.command } } }));
    expect(writeServerEntry(file, 'cursor', entry, when).changed).toBe(false);
  });

  it('keeps the comments, trailing commas and the rest of a JSONC file (VS Code allows them)', () => {
    const file = join(folder(), 'mcp.json');
    const original =
      '{\n  // my servers\n  "servers": {\n    /* kept */ "other": { "type": "stdio", "command": "other" },\n  },\n  "inputs": [],\n}\n';
    writeFileSync(file, original);
    writeServerEntry(file, 'vscode', entry, when);
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('// my servers');
    expect(text).toContain('/* kept */ "other": {');
    expect(text).toContain('"inputs": [],\n}');
    expect(text).toMatch(/\n {4}"hanactl": \{\n {6}"type": "stdio",/);
  });

  it.each([
    ['.vscode/mcp.json', 'vscode', 0o644],
    ['.mcp.json', 'claude-code', 0o644],
    ['cursor-mcp.json', 'cursor', 0o600],
  ] as const)('creates %s with mode %s (files meant to be shared are 0644; they never hold a secret)', (name, client, mode) => {
    const file = join(folder(), name);
    writeServerEntry(file, client, entry, when);
    expect(statSync(file).mode & 0o777).toBe(mode);
  });

  it('creates a missing file (and its folder) with no backup', () => {
    const file = join(folder(), '.vscode', 'mcp.json');
    const result = writeServerEntry(file, 'vscode', entry, when);
    expect(result).toEqual({ file, changed: true, created: true, replaced: false });
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ servers: { hanactl: { type: 'stdio', ...entry } } });
  });

  it.each([
    ['an unterminated object', '{"mcpServers": {"a": {}', 'cursor', /not valid JSON \(CloseBraceExpected/],
    ['a missing value', '{"servers": }', 'vscode', /not valid JSON \(ValueExpected/],
    ['an array', '[]', 'claude-desktop', /does not hold a JSON object/],
    ['a servers key that is a list', '{"mcpServers": []}', 'cursor', /"mcpServers" is not a JSON object/],
  ] as const)('refuses a file with %s, naming the file and the fix, and leaves it untouched', (_what, text, client, message) => {
    const dir = folder();
    const file = join(dir, 'config.json');
    writeFileSync(file, text);
    let error: unknown;
    try {
      writeServerEntry(file, client, entry, when);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HanactlError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/hanactl(?:\.js)? mcp-config --client|fix that key by hand/);
    expect(readFileSync(file, 'utf8')).toBe(text);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('keeps the file’s indentation and mode, and writes through a symlink', () => {
    const dir = folder();
    const real = join(dir, 'real.json');
    writeFileSync(real, '{\n\t"mcpServers": {}\n}');
    chmodSync(real, 0o640);
    const link = join(dir, 'link.json');
    symlinkSync(real, link);
    const result = writeServerEntry(link, 'cursor', entry, when);
    expect(result.file).toBe(real);
    expect(statSync(link).isFile()).toBe(true);
    expect(readFileSync(real, 'utf8')).toMatch(/^\{\n\t"mcpServers": \{\n\t\t"hanactl"/);
    expect(readFileSync(real, 'utf8').endsWith('}')).toBe(true);
    expect(statSync(real).mode & 0o777).toBe(0o640);
  });
});
