import type { MiddlewareHandler } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import { TOKEN_PREFIX, type TokenGrant } from '../tokens/token-service.js';
import { InvalidTokenError, type OAuthCaller, type OAuthSettings, ProviderUnavailableError } from './oauth-verifier.js';
import { rpcError } from './rpc-error.js';

/**
 * DNS rebinding protection, as the MCP spec asks of local servers: the Host header must name
 * the bound loopback address (or localhost) with its port, and an Origin, when a browser sends
 * one, must be that same place. Anything else is 403 before authentication or any work.
 */
export function hostAndOrigin(address: {
  readonly hosts: readonly string[];
  readonly origins: readonly string[];
  readonly remote?: boolean;
}): MiddlewareHandler {
  const hosts = new Set(address.hosts);
  const origins = new Set(address.origins);
  return async (c, next) => {
    // Beyond loopback the names are the proxy's and DNS's; the bearer token is the check.
    if (address.remote || hosts.size === 0) return next();
    const host = (c.req.header('host') ?? '').toLowerCase();
    if (!hosts.has(host)) {
      return rpcError(403, `The Host header "${host}" does not name this endpoint; use ${address.origins[0]}/mcp/<connection>.`);
    }
    const origin = c.req.header('origin');
    if (origin !== undefined && !origins.has(origin.toLowerCase())) {
      return rpcError(
        403,
        `Requests from the origin "${origin}" are refused; only ${address.origins.join(' or ')} may call this endpoint.`,
      );
    }
    await next();
  };
}

/** The token of an `Authorization: Bearer <token>` header, else undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  return match?.[1];
}

export type BearerVariables = { grant: TokenGrant; caller?: OAuthCaller };

/** How the endpoint authenticates callers, besides a person's static tokens. */
export interface BearerAuthDeps {
  readonly tokens: { verify(token: string): TokenGrant | undefined };
  /** Signed-in callers with the identity provider's access tokens, when configured. */
  readonly oauth?: { readonly settings: OAuthSettings; verify(token: string): Promise<OAuthCaller> };
}

/**
 * Where this broker's protected-resource metadata (RFC 9728) is: the well-known path inserted
 * before the resource identifier's path when the audience is a URL, else before `/mcp` on the
 * origin the request reached.
 */
export function resourceMetadataUrl(audience: string, requestUrl: string): string {
  const resource = httpUrl(audience);
  const base = resource ?? new URL('/mcp', requestUrl);
  const path = base.pathname === '/' ? '' : base.pathname.replace(/\/$/, '');
  return `${base.origin}/.well-known/oauth-protected-resource${path}`;
}

function httpUrl(text: string): URL | undefined {
  try {
    const url = new URL(text);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function quoted(text: string): string {
  return text.replace(/["\\]/g, '');
}

/**
 * A bearer token on every request: a person's static token (`hanactl token create`, always
 * `hanactl_...`) or, when an identity provider is configured, its JWT access token. None, an
 * unknown (revoked) or an invalid one is 401 with `WWW-Authenticate: Bearer`, which names the
 * protected-resource metadata when OAuth is on. The grant (and the signed-in caller) are left
 * for the route. The token itself is never logged nor passed on.
 */
export function bearerAuth(deps: BearerAuthDeps): MiddlewareHandler<{ Variables: BearerVariables }> {
  const { tokens, oauth } = deps;
  const challenge = (requestUrl: string, error?: { code: string; description?: string }): string => {
    const parts = ['Bearer realm="hanactl"'];
    if (oauth) parts.push(`resource_metadata="${resourceMetadataUrl(oauth.settings.audience, requestUrl)}"`);
    if (error) parts.push(`error="${error.code}"`);
    if (error?.description) parts.push(`error_description="${quoted(error.description)}"`);
    return parts.join(', ');
  };
  const howToGetOne = oauth
    ? `sign in with the identity provider ${oauth.settings.issuer}, or use a token from \`${cliCommand()} token create <label>\``
    : `a person creates one with \`${cliCommand()} token create <label>\``;
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (!token) {
      return rpcError(401, `This endpoint needs a bearer token: send \`Authorization: Bearer <token>\`; ${howToGetOne}.`, undefined, {
        'www-authenticate': challenge(c.req.url),
      });
    }
    if (!oauth || token.startsWith(TOKEN_PREFIX)) {
      const grant = tokens.verify(token);
      if (!grant) {
        const description = 'The bearer token is not valid (unknown or revoked)';
        return rpcError(401, `${description}; ${howToGetOne}.`, undefined, {
          'www-authenticate': challenge(c.req.url, { code: 'invalid_token' }),
        });
      }
      c.set('grant', grant);
      return next();
    }
    let caller: OAuthCaller;
    try {
      caller = await oauth.verify(token);
    } catch (err) {
      if (err instanceof ProviderUnavailableError) {
        return rpcError(503, `Signed-in callers cannot be checked now: ${err.message}.`, undefined, { 'retry-after': '30' });
      }
      if (!(err instanceof InvalidTokenError)) throw err;
      const description = `The access token is refused: ${err.message}`;
      return rpcError(401, `${description}; ${howToGetOne}.`, undefined, {
        'www-authenticate': challenge(c.req.url, { code: 'invalid_token', description }),
      });
    }
    // A signed-in caller's sessions are counted and bound by who they are.
    c.set('grant', { label: `${caller.subject} (${caller.issuer})`, connection: null });
    c.set('caller', caller);
    return next();
  };
}
