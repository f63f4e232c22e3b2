import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider from 'oidc-provider';

/** A client of the provider: the client credentials grant, as a machine client signs in. */
export const OIDC_CLIENT = { id: 'mcp-agent', secret: 'agent-secret-for-the-test-provider' } as const;

/** The group every token of the client names in its `groups` claim. */
export const OIDC_CLIENT_GROUP = 'analysts';

/** A machine client of the provider and the claims its access tokens carry. */
export interface TestOidcClient {
  readonly id: string;
  readonly secret: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** The default: one client whose tokens name its group. */
const DEFAULT_CLIENTS: readonly TestOidcClient[] = [{ ...OIDC_CLIENT, claims: { groups: [OIDC_CLIENT_GROUP] } }];

export interface TestOidcProvider {
  /** `http://127.0.0.1:PORT`: the issuer. */
  readonly issuer: string;
  /** The private signing keys, newest first (the first one signs). */
  readonly keys: readonly JWK[];
  /** An access token from the token endpoint for this resource (its audience), for a client (default the first). */
  token(resource: string, client?: { readonly id: string; readonly secret: string }): Promise<string>;
  /** A new signing key, published first in the JWKS; the old one stays published. */
  rotateKey(): Promise<JWK>;
  close(): Promise<void>;
}

async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
}

function build(issuer: string, keys: readonly JWK[], clients: readonly TestOidcClient[]): Provider {
  return new Provider(issuer, {
    clients: clients.map((client) => ({
      client_id: client.id,
      client_secret: client.secret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    })),
    jwks: { keys: keys.map((k) => ({ ...k })) as never },
    scopes: ['mcp'],
    ttl: { ClientCredentials: 300 },
    // Each client's tokens carry its claims, as a provider's claim mappers add groups or attributes.
    extraTokenClaims: (_ctx, token) => ({ ...clients.find((c) => c.id === (token as { clientId?: string }).clientId)?.claims }),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // JWT access tokens are issued only for a resource server whose format is 'jwt'.
      resourceIndicators: {
        enabled: true,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({ scope: 'mcp', audience: resource, accessTokenFormat: 'jwt', accessTokenTTL: 300 }),
      },
    },
  });
}

/**
 * A real OpenID provider (the `oidc-provider` package) on a free loopback port, in this process.
 * A key rotation swaps in a provider built with the new key first: the same issuer, the same
 * port, the old key still in its JWKS, as a provider rotates keys in production.
 */
export async function startOidcProvider(clients: readonly TestOidcClient[] = DEFAULT_CLIENTS): Promise<TestOidcProvider> {
  let current: Provider | undefined;
  const server = http.createServer((req, res) => {
    if (!current) {
      res.statusCode = 503;
      res.end();
      return;
    }
    void current.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const keys: JWK[] = [await signingKey('key-1')];
  current = build(issuer, keys, clients);
  return {
    issuer,
    keys,
    token: async (resource, client = clients[0] as TestOidcClient) => {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${client.id}:${client.secret}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope: 'mcp' }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!response.ok || !body.access_token)
        throw new Error(`token endpoint: ${response.status} ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    rotateKey: async () => {
      const next = await signingKey(`key-${keys.length + 1}`);
      keys.unshift(next);
      current = build(issuer, keys, clients);
      return next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
