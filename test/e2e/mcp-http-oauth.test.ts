import { createRequire } from 'node:module';
import { join } from 'node:path';
import { decodeJwt, decodeProtectedHeader, importJWK, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { connectHttp, rawRequest } from '../helpers/mcp-http.js';
import { startOAuthDaemon } from '../helpers/oauth-daemon.js';
import { OIDC_CLIENT, OIDC_CLIENT_GROUP, startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

/** A JWT signed with one of the provider's own keys, with the claims a test chooses. */
async function signWith(key: JWK, claims: Record<string, unknown>, expiresAt: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'RS256', kid: key.kid as string, typ: 'at+jwt' })
    .setIssuedAt(now - 600)
    .setExpirationTime(expiresAt)
    .sign(await importJWK(key, 'RS256'));
}

describe('MCP over HTTP with OAuth: the daemon as a resource server of a real OpenID provider', () => {
  const home = new TestHome();
  let provider: TestOidcProvider;
  let port: number;
  let base: string;
  let audience: string;
  let metadataUrl: string;

  beforeAll(async () => {
    provider = await startOidcProvider();
    // No cooldown between JWKS fetches, so a rotated key is fetched on its first token.
    ({ port, base, audience } = await startOAuthDaemon(home, provider.issuer, (audience) => ({
      oauth: { issuer: provider.issuer, audience, jwksCooldownMillis: 0 },
    })));
    metadataUrl = `${base}/.well-known/oauth-protected-resource/mcp`;
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT NOT NULL); INSERT INTO items VALUES (1, 'alpha'), (2, 'beta');");
    db.close();
    await home.ok(['add', '--no-test', 'shop', `sqlite:${file}`]);
    await home.ok(['add', '--no-test', 'other', `sqlite:${file}`]);
    expect((await home.ok(['grant', 'shop', OIDC_CLIENT.id])).stdout.trim()).toBe(
      `Granted: "${OIDC_CLIENT.id}" may use the connection "shop" over MCP over HTTP.`,
    );
  });

  afterAll(async () => {
    await home.dispose();
    await provider?.close();
  });

  const init = (token?: string) =>
    rawRequest(port, '/mcp/shop', { host: `127.0.0.1:${port}`, ...(token ? { authorization: `Bearer ${token}` } : {}) });

  /** Asserts the refusal a client sees: 401 and the challenge naming the metadata and the error. */
  async function expectRefused(token: string, reason: RegExp): Promise<void> {
    const answer = await init(token);
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(
      new RegExp(`^Bearer realm="hanactl", resource_metadata="${metadataUrl}", error="invalid_token", error_description="[^"]*"$`),
    );
    expect(JSON.parse(answer.body).error.message).toMatch(reason);
    expect(answer.body).not.toContain(token);
  }

  it('answers a request without a token with 401 and a WWW-Authenticate header pointing to the metadata', async () => {
    const answer = await init();
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toBe(`Bearer realm="hanactl", resource_metadata="${metadataUrl}"`);
    expect(JSON.parse(answer.body).error.message).toContain(`sign in with the identity provider ${provider.issuer}`);
  });

  it('publishes its protected-resource metadata at the root and path-suffixed well-known URLs', async () => {
    for (const path of [
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/mcp/shop',
    ]) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual({
        resource: audience,
        authorization_servers: [provider.issuer],
        bearer_methods_supported: ['header'],
        resource_name: 'hanactl',
      });
    }
  });

  it('runs run_query end to end with an access token from the provider’s token endpoint', async () => {
    const token = await provider.token(audience);
    expect(decodeProtectedHeader(token).typ).toBe('at+jwt');
    expect(decodeJwt(token)).toMatchObject({ iss: provider.issuer, aud: audience });
    const client = await connectHttp(`${base}/mcp/shop`, token, 'oauth-client');
    try {
      const result = await client.call('run_query', { sql: 'SELECT id, label FROM items ORDER BY id' });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toMatchObject({
        rows: [
          { id: 1, label: 'alpha' },
          { id: 2, label: 'beta' },
        ],
      });
    } finally {
      await client.close();
    }
  });

  it('refuses an expired token (401)', async () => {
    const claims = { iss: provider.issuer, aud: audience, sub: 'mcp-agent' };
    const expired = await signWith(provider.keys[0] as JWK, claims, Math.floor(Date.now() / 1000) - 60);
    await expectRefused(expired, /the token has expired/);
  });

  it('refuses a token the provider issued for another audience (401)', async () => {
    const other = await provider.token('https://another-service.example/mcp');
    expect(decodeJwt(other).aud).toBe('https://another-service.example/mcp');
    await expectRefused(other, /issued for another audience/);
  });

  it('refuses a token signed with the provider’s key but naming another issuer (401)', async () => {
    const claims = { iss: 'https://impostor.example', aud: audience, sub: 'mcp-agent' };
    const token = await signWith(provider.keys[0] as JWK, claims, Math.floor(Date.now() / 1000) + 300);
    await expectRefused(token, /issued by another issuer/);
  });

  it('refuses a token whose payload was altered after signing (401)', async () => {
    const [header, payload, signature] = (await provider.token(audience)).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    const altered = Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url');
    await expectRefused(`${header}.${altered}.${signature}`, /signature does not verify/);
  });

  it('accepts a token signed with a key the provider rotated in, without a restart', async () => {
    const before = await provider.token(audience);
    const pidBefore = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout).pid;
    const next = await provider.rotateKey();
    const token = await provider.token(audience);
    expect(decodeProtectedHeader(token).kid).toBe(next.kid);
    expect(decodeProtectedHeader(before).kid).not.toBe(next.kid);
    const client = await connectHttp(`${base}/mcp/shop`, token, 'oauth-rotated');
    try {
      expect((await client.call('run_query', { sql: 'SELECT count(*) AS n FROM items' })).structuredContent).toMatchObject({
        rows: [{ n: 2 }],
      });
    } finally {
      await client.close();
    }
    expect(JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout).pid).toBe(pidBefore);
  });

  it('refuses a connection without a grant (403); a grant to *, to a group, and each revoke take effect on the next request', async () => {
    const token = await provider.token(audience);
    const other = () => rawRequest(port, '/mcp/other', { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` });
    const refused = await other();
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toMatch(
      new RegExp(
        `^You \\(${OIDC_CLIENT.id}\\) have no grant for the connection "other"; a person gives one with \`.*hanactl(\\.js)? grant other <subject-or-group>\`\\.$`,
      ),
    );
    const unknown = await rawRequest(port, '/mcp/nowhere', { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` });
    expect(unknown.status).toBe(403);

    for (const principal of ['*', OIDC_CLIENT_GROUP]) {
      await home.ok(['grant', 'other', principal]);
      const client = await connectHttp(`${base}/mcp/other`, token, `oauth-grant-${principal}`);
      try {
        expect((await client.call('run_query', { sql: 'SELECT 1 AS one' })).structuredContent).toMatchObject({ rows: [{ one: 1 }] });
        const listed = await client.call('list_connections');
        expect(JSON.stringify(listed.structuredContent)).toContain('"other"');
        expect(JSON.stringify(listed.structuredContent)).not.toContain('"shop"');
      } finally {
        await client.close();
      }
      const grants = JSON.parse((await home.ok(['grants', '--json'])).stdout).grants;
      expect(grants.map((g: { connection: string; principal: string }) => `${g.connection}:${g.principal}`)).toEqual([
        `other:${principal}`,
        `shop:${OIDC_CLIENT.id}`,
      ]);
      expect((await home.ok(['revoke', 'other', principal])).stdout.trim()).toBe(
        `Revoked: ${principal === '*' ? 'every signed-in caller' : `"${principal}"`} may no longer use the connection "other".`,
      );
      expect((await other()).status).toBe(403);
    }
    await home.ok(['grant', 'other', 'someone-else']);
    expect((await other()).status).toBe(403);
  }, 90_000); // nine CLI runs, each a Node process start: slow on a busy machine

  it('never writes a token to the daemon log', async () => {
    const token = await provider.token(audience);
    await init(token);
    const { readFileSync } = await import('node:fs');
    const log = readFileSync(join(home.dir, 'logs', 'daemon.log'), 'utf8');
    expect(log).toContain('MCP over HTTP listening');
    expect(log).not.toContain(token.split('.')[2]);
  });
});
