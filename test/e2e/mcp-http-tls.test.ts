import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { freePort } from '../helpers/mcp-http.js';

/** A GET over TLS that trusts only the given certificate. */
function httpsGet(
  port: number,
  path: string,
  ca: string | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path, headers, ...(ca ? { ca } : {}) }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('MCP over HTTP with TLS, and the flags that configure a team broker', () => {
  const home = new TestHome();
  let cert: string;
  let key: string;

  beforeAll(() => {
    cert = join(home.dir, 'broker.crt');
    key = join(home.dir, 'broker.key');
  });

  afterAll(() => home.dispose());

  it('refuses half a pair of flags with a usage error (exit 2), starting nothing', async () => {
    const port = await freePort();
    const tls = await home.run(['daemon', 'start', '--http', '--listen', `127.0.0.1:${port}`, '--tls-cert', 'x.crt']);
    expect([tls.code, tls.stderr.trim()]).toEqual([2, 'hanactl: --tls-cert needs --tls-key too.']);
    const oauth = await home.run([
      'daemon',
      'start',
      '--http',
      '--listen',
      `127.0.0.1:${port}`,
      '--oauth-audience',
      'https://db.example/mcp',
    ]);
    expect([oauth.code, oauth.stderr.trim()]).toEqual([2, 'hanactl: --oauth-audience needs --oauth-issuer too.']);
    const bare = await home.run(['daemon', 'start', '--http']);
    expect([bare.code, bare.stderr.trim()]).toEqual([2, 'hanactl: --http needs an address: --listen <host:port>.']);
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
  });

  it('serves HTTPS with the given certificate: the metadata, and 401 with the challenge', async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        key,
        '-out',
        cert,
      ],
      { stdio: 'ignore' },
    );
    const port = await freePort();
    const audience = `https://127.0.0.1:${port}/mcp`;
    const started = await home.ok([
      'daemon',
      'start',
      '--http',
      '--listen',
      `127.0.0.1:${port}`,
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      '--oauth-issuer',
      'https://login.example.com/realms/team',
      '--oauth-audience',
      audience,
    ]);
    expect(started.stdout).toContain(`MCP over HTTP at https://127.0.0.1:${port}/mcp/<connection>`);
    const ca = readFileSync(cert, 'utf8');
    const metadata = await httpsGet(port, '/.well-known/oauth-protected-resource/mcp', ca, { host: `127.0.0.1:${port}` });
    expect(metadata.status).toBe(200);
    expect(JSON.parse(metadata.body)).toMatchObject({
      resource: audience,
      authorization_servers: ['https://login.example.com/realms/team'],
    });
    const refused = await httpsGet(port, '/mcp/shop', ca, { host: `127.0.0.1:${port}` });
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer realm="hanactl", resource_metadata="https://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`,
    );
    await expect(httpsGet(port, '/mcp/shop', undefined)).rejects.toThrow(/self-signed certificate|unable to verify/);
  });
});
