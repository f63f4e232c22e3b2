import type { MiddlewareHandler } from 'hono';
import { CONNECTION_SCOPE_HEADER } from '../../shared/client-header.js';
import { HanactlError } from '../../shared/errors.js';
import type { ConnectionService } from '../registry/connection-service.js';
import { requestHeader } from './node-request.js';
import { toConnectionInfo } from '../registry/connection-service.js';

/** Any connection but the endpoint's: refused without naming the others. */
export function elsewhere(name: string, scope: string): HanactlError {
  return new HanactlError(
    'CONNECTION_NOT_FOUND',
    `There is no connection named "${name.slice(0, 64)}" on this endpoint; it serves only "${scope}".`,
  );
}

/** Project detection lists a folder's connections: refused where one connection is served. */
export function projectsRefused(scope: string): HanactlError {
  return new HanactlError('FORBIDDEN', `Project folders are not looked at over this endpoint; it serves only "${scope}".`);
}

/** The `connection` a JSON body names, read from a copy so the route still reads the body. */
async function bodyConnection(request: Request): Promise<unknown> {
  try {
    return ((await request.clone().json()) as { connection?: unknown } | null)?.connection;
  } catch {
    return undefined; // the route answers a body that is not JSON
  }
}

/**
 * A request carrying CONNECTION_SCOPE_HEADER (an MCP over HTTP session's in-process client) sees
 * one connection: the listing holds only it, any other name is "not on this endpoint" without
 * naming the others, project detection (which lists a folder's connections) is refused.
 */
export function connectionScope(connections: Pick<ConnectionService, 'resolve'>): MiddlewareHandler {
  return async (c, next) => {
    const scope = requestHeader(c, CONNECTION_SCOPE_HEADER); // never builds a Web Request (see node-request.ts)
    if (scope === undefined) return next();
    const path = c.req.path;
    if (c.req.method === 'GET' && path === '/v1/connections') {
      return c.json({ connections: [toConnectionInfo(connections.resolve(scope))] });
    }
    const named = /^\/v1\/connections\/([^/]+)/.exec(path);
    if (named) {
      const name = decodeURIComponent(named[1] as string);
      if (name !== scope) throw elsewhere(name, scope);
    }
    if (path.startsWith('/v1/projects/')) {
      throw projectsRefused(scope);
    }
    if (c.req.method === 'POST' && (path === '/v1/query' || path.startsWith('/v1/catalog/'))) {
      const name = await bodyConnection(c.req.raw);
      if (typeof name === 'string' && name !== scope) throw elsewhere(name, scope);
    }
    await next();
  };
}
