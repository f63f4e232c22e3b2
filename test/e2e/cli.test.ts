import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';

describe('hanactl on the command line', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('reports a stopped daemon with exit 1 and tells how to start it', async () => {
    const result = await home.run(['daemon', 'status']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/not running.*hanactl(?:\.js)? daemon start/s);
    const json = JSON.parse((await home.run(['daemon', 'status', '--json'])).stdout);
    expect(json).toMatchObject({ running: false });
  });

  it('starts the daemon on demand, with a private socket folder and socket', async () => {
    await home.ok(['add', '--no-test', 'mem', 'sqlite::memory:']);
    const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    expect(status).toMatchObject({ running: true, keySource: 'env', home: home.dir });
    expect(typeof status.pid).toBe('number');
    expect(statSync(join(home.dir, 'run')).mode & 0o777).toBe(0o700);
    expect(statSync(status.socket).mode & 0o777).toBe(0o600);
  });

  it('reports the running daemon on a second start', async () => {
    const result = await home.ok(['daemon', 'start']);
    expect(result.stdout).toMatch(/already running \(pid \d+\)/);
  });

  it.each([
    ['bad name', ['add', '--no-test', 'no spaces', 'sqlite::memory:'], /contains " "/],
    ['long name', ['add', '--no-test', 'x'.repeat(65), 'sqlite::memory:'], /limit is 64/],
    ['unknown scheme', ['add', '--no-test', 'x', 'oracle://h/db'], /Unknown URL scheme "oracle:"/],
    ['bad port', ['add', '--no-test', 'x', 'postgres://u@h:99999/db'], /port/i],
    ['password in query', ['add', '--no-test', 'x', 'postgres://u@h/db?password=x'], /Do not put a password/],
  ])('refuses a %s with a sentence and exit 2', async (_what, args, message) => {
    const result = await home.run(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('refuses a duplicate name and keeps the first', async () => {
    await home.ok(['add', '--no-test', 'dup', 'sqlite::memory:', '--description', 'first']);
    const again = await home.run(['add', '--no-test', 'dup', 'sqlite::memory:', '--description', 'second']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/already exists.*--replace/);
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections.find((c: { name: string }) => c.name === 'dup').description).toBe('first');
  });

  it.each([
    [
      'pg-opt',
      'postgres://app@127.0.0.1:5432/db?options=-c%20default_transaction_read_only%3Doff',
      /PostgreSQL URL option "options" is not supported; the options are: sslmode, /,
    ],
    [
      'my-opt',
      'mysql://app@127.0.0.1:3306/db?multipleStatements=true',
      /MySQL\/MariaDB URL option "multipleStatements" is not supported; the options are: ssl, /,
    ],
    ['lite-opt', 'sqlite::memory:?cache=shared', /SQLite URL option "cache" is not supported; the options are: mode/],
    ['hana-opt', 'hana://u@127.0.0.1:30015/HXE?bogus=1', /SAP HANA URL option "bogus" is not supported; the options are: encrypt, /],
  ])('refuses an unknown URL option at add (%s), naming the allowed ones, and keeps nothing', async (name, url, message) => {
    const result = await home.run(['add', '--no-test', name, url, '--no-password']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
    expect((await home.ok(['list', '--json'])).stdout).not.toContain(name);
  });

  it('resolves a relative SQLite path against the caller’s folder', async () => {
    await home.ok(['add', '--no-test', 'rel', 'sqlite:./some/file.db']);
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections.find((c: { name: string }) => c.name === 'rel').url).toBe(`sqlite:${join(process.cwd(), 'some/file.db')}`);
  });

  it('removes a connection and says so; an unknown one is an error naming what exists', async () => {
    await home.ok(['remove', 'rel']);
    const gone = await home.run(['remove', 'rel']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no connection named "rel".*Known connections: .*mem/i);
  });

  it('prints the config an editor needs', async () => {
    const cursor = JSON.parse((await home.ok(['mcp-config', '--client', 'cursor', '--connection', 'mem'])).stdout);
    const entry = cursor.mcpServers.hanactl;
    expect(entry.command).toMatch(/bin\/hanactl-mcp$/);
    expect(entry.args).toEqual(['--connection', 'mem']);
    expect(entry.env).toEqual({ HANACTL_NODE: process.execPath, HANACTL_HOME: home.dir });
    // What the editor would run answers the MCP handshake and lists the tools.
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const client = new Client({ name: 'editor', version: '1' });
    await client.connect(
      new StdioClientTransport({ command: entry.command, args: entry.args, env: { ...home.env, ...entry.env } as Record<string, string> }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('run_query');
    const result = await client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 7 AS n' } });
    expect(result.structuredContent).toMatchObject({ rows: [{ n: 7 }] });
    await client.close();
    const code = (await home.ok(['mcp-config', '--client', 'claude-code'])).stdout;
    expect(code).toMatch(/^claude mcp add hanactl /);
    expect((await home.run(['mcp-config', '--client', 'emacs'])).code).toBe(2);
  });

  it('has help with examples and documented exit codes', async () => {
    const help = await home.ok(['--help']);
    expect(help.stdout).toMatch(/Examples:/);
    expect(help.stdout).toMatch(/Exit codes: 0 ok, 1 failure, 2 usage/);
    expect((await home.run(['no-such-command'])).code).toBe(2);
  });

  it('stops the daemon: socket and pid file gone', async () => {
    const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    await home.ok(['daemon', 'stop']);
    expect(existsSync(status.socket)).toBe(false);
    expect(readdirSync(join(home.dir, 'run'))).not.toContain('daemon.pid');
    expect(() => process.kill(status.pid, 0)).toThrow();
  });
});

describe('auto-start under a race', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('many clients starting at once yield exactly one daemon', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => home.run(['list', '--json'])));
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    const { execFileSync } = await import('node:child_process');
    const daemons = () =>
      execFileSync('pgrep', ['-f', 'daemon start --foreground'], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter((pid) => {
          try {
            return execFileSync('cat', [`/proc/${pid}/environ`], { encoding: 'utf8' }).includes(`HANACTL_HOME=${home.dir}`);
          } catch {
            return false;
          }
        });
    // Starters that lost the race exit on their own once they see the lock; give them a moment.
    const deadline = Date.now() + 5000;
    while (daemons().length > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(daemons()).toEqual([String(status.pid)]);
  });
});

describe('a daemon without a key source', () => {
  const home = new TestHome({ keyInEnv: false, extraEnv: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' } });
  afterAll(() => home.dispose());

  it('refuses to start and names both remedies', async () => {
    const result = await home.run(['daemon', 'start']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/HANACTL_REGISTRY_KEY/);
    expect(result.stderr).toMatch(/--key-file/);
    expect(existsSync(join(home.dir, 'registry.db'))).toBe(false);
  });

  it('starts with an opted-in key file and says so in status', async () => {
    await home.ok(['daemon', 'start', '--key-file']);
    const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    expect(status.keySource).toBe('file');
    expect(statSync(join(home.dir, 'registry.key')).mode & 0o777).toBe(0o600);
    expect((await home.ok(['daemon', 'status'])).stdout).toMatch(/weaker than the OS keychain/);
  });
});
