import type { MiddlewareHandler } from 'hono';
import { cliCommand } from '../../shared/cli-command.js';
import type { TokenGrant } from '../tokens/token-service.js';
import { rpcError } from './rpc-error.js';

/**
 * DNS rebinding protection, as the MCP spec asks of local servers: the Host header must name
 * the bound loopback address (or localhost) with its port, and an Origin, when a browser sends
 * one, must be that same place. Anything else is 403 before authentication or any work.
 */
export function hostAndOrigin(address: { readonly hosts: readonly string[]; readonly origins: readonly string[] }): MiddlewareHandler {
  const hosts = new Set(address.hosts);
  const origins = new Set(address.origins);
  return async (c, next) => {
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

export type BearerVariables = { grant: TokenGrant };

/**
 * A person's bearer token (`hanactl token create`) on every request: none or an unknown
 * (revoked) one is 401 with `WWW-Authenticate: Bearer`. The grant is left for the route.
 */
export function bearerAuth(tokens: { verify(token: string): TokenGrant | undefined }): MiddlewareHandler<{ Variables: BearerVariables }> {
  return async (c, next) => {
    const token = bearerToken(c.req.header('authorization'));
    if (!token) {
      return rpcError(
        401,
        `This endpoint needs a bearer token: send \`Authorization: Bearer <token>\`; a person creates one with \`${cliCommand()} token create <label>\`.`,
        undefined,
        {
          'www-authenticate': 'Bearer realm="hanactl"',
        },
      );
    }
    const grant = tokens.verify(token);
    if (!grant) {
      return rpcError(
        401,
        `The bearer token is not valid (unknown or revoked); a person creates one with \`${cliCommand()} token create <label>\`.`,
        undefined,
        {
          'www-authenticate': 'Bearer realm="hanactl", error="invalid_token"',
        },
      );
    }
    c.set('grant', grant);
    await next();
  };
}
