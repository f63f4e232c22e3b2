import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_CLIENT_NAME } from '../../shared/client-header.js';
import { DaemonClient } from '../../shared/daemon-client.js';
import { resolvePaths } from '../../shared/paths.js';
import { listTokens } from '../../shared/token-client.js';
import { TokenListSchema } from '../../shared/token-schemas.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { connectHttp, createToken, freePort, rawRequest, startHttpDaemon } from '../helpers/mcp-http.js';

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return [];
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

describe('MCP over HTTP: bearer tokens, scopes, Host and Origin', () => {
  const home = new TestHome();
  let port: number;
  let base: string;
  let token: string;
  let createdOutput: string;

  beforeAll(async () => {
    ({ port, base } = await startHttpDaemon(home));
    await home.ok(['add', '--no-test', 'one', 'sqlite::memory:']);
    await home.ok(['add', '--no-test', 'two', 'sqlite::memory:']);
    const created = await home.ok(['token', 'create', 'laptop']);
    token = created.stdout.trim();
    createdOutput = created.stdout + created.stderr;
  });

  afterAll(() => home.dispose());

  const init = (path: string, headers: Record<string, string> = {}) => rawRequest(port, path, { host: `127.0.0.1:${port}`, ...headers });

  it('prints the token once, alone on stdout, and says it is shown this once', () => {
    expect(token).toMatch(/^hanactl_[A-Za-z0-9_-]{43}$/);
    expect(createdOutput).toMatch(/shown this once; the daemon keeps only its hash/);
  });

  it('refuses a request without a token: 401 with WWW-Authenticate: Bearer', async () => {
    const answer = await init('/mcp/one');
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="hanactl"');
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/needs a bearer token/) } });
    const wrong = await init('/mcp/one', { authorization: 'Bearer hanactl_not-a-real-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer realm="hanactl", error="invalid_token"');
    const error = await connectHttp(`${base}/mcp/one`, undefined).catch((e: Error & { code?: number }) => e);
    expect(error).toMatchObject({ code: 401 });
  });

  it('accepts a valid token, and records when it was last used', async () => {
    const client = await connectHttp(`${base}/mcp/one`, token);
    expect((await client.call('run_query', { sql: 'SELECT 1 AS one' })).structuredContent).toMatchObject({ rows: [{ one: 1 }] });
    await client.close();
    const { tokens } = TokenListSchema.parse(JSON.parse((await home.ok(['token', 'list', '--json'])).stdout));
    expect(tokens).toEqual([{ label: 'laptop', connection: null, createdAt: expect.any(String), lastUsedAt: expect.any(String) }]);
  });

  it('refuses a token scoped to one connection on another connection’s endpoint (403)', async () => {
    const scoped = await createToken(home, 'only-one', 'one');
    const own = await connectHttp(`${base}/mcp/one`, scoped);
    await own.close();
    const answer = await init('/mcp/two', { authorization: `Bearer ${scoped}` });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toBe('The token "only-one" is limited to the connection "one"; it cannot open /mcp/two.');
    const error = await connectHttp(`${base}/mcp/two`, scoped).catch((e: Error & { code?: number }) => e);
    expect(error).toMatchObject({ code: 403 });
  });

  it('lists tokens (label, connection, created, last used), never the token', async () => {
    const table = await home.ok(['token', 'list']);
    expect(table.stdout).toMatch(/label\s+\| connection\s+\| created\s+\| last used/);
    expect(table.stdout).toMatch(/only-one\s+\| one\s+\|/);
    expect(table.stdout).toMatch(/laptop\s+\| \(any\)\s+\|/);
    const json = await home.ok(['token', 'list', '--json']);
    for (const output of [table.stdout, table.stderr, json.stdout, json.stderr]) expect(output).not.toContain('hanactl_');
  });

  it('refuses a revoked token with 401, also inside a session it opened', async () => {
    const doomed = await createToken(home, 'doomed');
    const client = await connectHttp(`${base}/mcp/one`, doomed);
    await home.ok(['token', 'revoke', 'doomed']);
    const answer = await init('/mcp/one', { authorization: `Bearer ${doomed}` });
    expect(answer.status).toBe(401);
    await expect(client.call('run_query', { sql: 'SELECT 1' })).rejects.toMatchObject({ code: 401 });
    await client.close().catch(() => {});
    const again = await home.run(['token', 'revoke', 'doomed']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/There is no token labelled "doomed"/);
  });

  it('refuses a second token with a taken label, and a scope naming no connection', async () => {
    const taken = await home.run(['token', 'create', 'laptop']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/A token labelled "laptop" exists already/);
    const unknown = await home.run(['token', 'create', 'x', '--connection', 'nope']);
    expect(unknown.stderr).toMatch(/There is no connection named "nope"/);
  });

  it('serves the token routes to the hanactl command line only', async () => {
    const socketPath = resolvePaths(home.env).socket;
    for (const clientName of ['hanactl-shim', 'hanactl-http']) {
      const client = new DaemonClient({ socketPath, clientName });
      try {
        await expect(listTokens(client)).rejects.toMatchObject({
          code: 'FORBIDDEN',
          message: expect.stringMatching(/Only a person can create, list or revoke/),
        });
        await expect(client.request('POST', '/v1/tokens', { label: 'agent-made' })).rejects.toMatchObject({ code: 'FORBIDDEN' });
      } finally {
        client.close();
      }
    }
    const cli = new DaemonClient({ socketPath, clientName: CLI_CLIENT_NAME });
    expect((await listTokens(cli)).map((t) => t.label)).not.toContain('agent-made');
    cli.close();
  });

  it('keeps no token in the registry (its sha256 only), the logs or any other file', async () => {
    await home.ok(['daemon', 'stop']); // flush the log, checkpoint the registry
    for (const file of filesUnder(home.dir)) expect(readFileSync(file).includes(token), file).toBe(false);
    const db = new Database(join(home.dir, 'registry.db'), { readonly: true });
    db.pragma(`cipher='sqlcipher'`);
    db.pragma('legacy=4');
    db.pragma(`key="x'${Buffer.from(home.env.HANACTL_REGISTRY_KEY ?? '', 'base64').toString('hex')}'"`);
    const rows = db.prepare('SELECT * FROM tokens ORDER BY label').all() as Record<string, unknown>[];
    db.close();
    expect(rows.find((r) => r.label === 'laptop')?.hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain('hanactl_');
    await startHttpDaemon(home).then((started) => ({ port, base } = started));
  });

  describe('DNS rebinding: Host and Origin must name the endpoint', () => {
    it.each([
      ['a foreign Host', { host: 'evil.example:PORT' }, /The Host header "evil\.example:\d+" does not name this endpoint/],
      ['a Host with another port', { host: '127.0.0.1:1' }, /does not name this endpoint/],
      ['a foreign Origin', { origin: 'http://evil.example' }, /Requests from the origin "http:\/\/evil\.example" are refused/],
      ['an Origin with another port', { origin: 'http://127.0.0.1:1' }, /are refused/],
      ['an opaque Origin', { origin: 'null' }, /are refused/],
    ])('refuses %s with 403, before the token is even looked at', async (_what, headers, message) => {
      const fixed = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('PORT', String(port))]));
      const answer = await init('/mcp/one', { authorization: `Bearer ${token}`, ...fixed });
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.message).toMatch(message);
    });

    it.each([
      ['Host 127.0.0.1:PORT, Origin http://127.0.0.1:PORT', { host: '127.0.0.1:PORT', origin: 'http://127.0.0.1:PORT' }],
      ['Host localhost:PORT, Origin http://localhost:PORT', { host: 'localhost:PORT', origin: 'http://localhost:PORT' }],
    ])('accepts %s', async (_what, headers) => {
      const fixed = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, v.replace('PORT', String(port))]));
      const answer = await init('/mcp/one', { authorization: `Bearer ${token}`, ...fixed });
      expect(answer.status).toBe(200);
    });

    it('lists no session for a bare initialize without the initialized notification (a probe)', async () => {
      const { sessions } = JSON.parse((await home.ok(['status', '--json'])).stdout) as { sessions: { client: { name: string } }[] };
      expect(sessions.map((s) => s.client.name)).not.toContain('raw');
      expect(sessions.map((s) => s.client.name)).not.toContain('unknown');
    });
  });
});

describe('MCP over HTTP listens on loopback only', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  const lan =
    Object.values(networkInterfaces())
      .flat()
      .find((i) => i && !i.internal && i.family === 'IPv4')?.address ?? '192.168.1.20';

  it.each([
    [
      'every IPv4 interface',
      '0.0.0.0',
      'The MCP over HTTP address 0.0.0.0 would listen on every network interface; hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:PORT. To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>.',
    ],
    [
      'every IPv6 interface',
      '[::]',
      'The MCP over HTTP address :: would listen on every network interface; hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:PORT. To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>.',
    ],
    [
      'a LAN address',
      lan,
      `The MCP over HTTP address ${lan} is not a loopback address; hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:PORT. To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>.`,
    ],
    [
      'a host name that does not resolve to loopback',
      'no-such-host.invalid',
      'The MCP over HTTP host "no-such-host.invalid" does not resolve; hanactl serves MCP over HTTP on loopback only; use 127.0.0.1:PORT. To listen beyond loopback, serve TLS: add --tls-cert <file> --tls-key <file>.',
    ],
  ])('refuses %s at start with a sentence (exit 2), starting nothing', async (_what, host, sentence) => {
    const port = await freePort();
    const result = await home.run(['daemon', 'start', '--http', `${host}:${port}`]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim()).toBe(`hanactl: ${sentence.replace('PORT', String(port))}`);
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
  });

  it('refuses a non-loopback address from config.json: the daemon does not start, and says why', async () => {
    const port = await freePort();
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ http: `0.0.0.0:${port}` }));
    const result = await home.run(['daemon', 'start']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/could not start: .*The MCP over HTTP address 0\.0\.0\.0 would listen on every network interface/);
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
  });

  it('serves on the config’s loopback address when no flag is given', async () => {
    const port = await freePort();
    writeFileSync(join(home.dir, 'config.json'), JSON.stringify({ http: `localhost:${port}` }));
    const started = await home.ok(['daemon', 'start']);
    expect(started.stdout).toContain(`MCP over HTTP at http://127.0.0.1:${port}/mcp/<connection>`);
    expect((await home.ok(['daemon', 'status'])).stdout).toContain(`mcp http     http://127.0.0.1:${port}/mcp/<connection>`);
  });
});
