import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { ConnectionInfo } from '../../shared/schemas.js';
import type { Broker } from '../../shim/broker.js';
import { admittedCalls } from '../mcp/admitted-calls.js';
import type { OAuthCaller } from './oauth-verifier.js';
import { contextFromClaims, contextFromQuery } from './query-context.js';

/** A connection the signed-in caller has no grant for: refused, naming the grant a person gives. */
export function notGranted(name: string, caller: Pick<OAuthCaller, 'subject'>): HanactlError {
  const shown = name.slice(0, 64);
  return new HanactlError(
    'FORBIDDEN',
    `You (${caller.subject}) have no grant for the connection "${shown}"; a person gives one with \`${cliCommand()} grant ${shown} ${caller.subject}\`.`,
  );
}

/**
 * The URL's context values on `/mcp` (no connection in the path): a connection's declared
 * names only, each checked as on `/mcp/<connection>`; names whose values come from the
 * caller's claims are refused when given.
 */
export function contextOnSharedEndpoint(
  pairs: readonly (readonly [string, string])[],
  connection: ConnectionInfo,
  caller: OAuthCaller,
): Record<string, string> {
  const declared = new Set(connection.context);
  const raw = pairs
    .filter(([name]) => declared.has(name.trim().toUpperCase()))
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
  return contextFromQuery(raw, connection, contextFromClaims(connection, caller));
}

/**
 * A signed-in caller's session on `/mcp`, where the URL names no connection: the listing holds
 * only the connections granted to the caller, any other name is refused naming the missing
 * grant, and each call carries the context values of its connection (from the caller's claims
 * where the connection maps them, else from the URL). Project folders are not looked at.
 */
export function grantedBroker(
  broker: Broker,
  caller: OAuthCaller,
  grants: { allows(connection: string, caller: OAuthCaller): boolean },
  urlContext: readonly (readonly [string, string])[],
): Broker {
  const granted = (name: string) => {
    if (!grants.allows(name, caller)) throw notGranted(name, caller);
  };
  const contextOf = async (name: string) => {
    granted(name);
    const context = contextOnSharedEndpoint(urlContext, await broker.getConnection(name), caller);
    return Object.keys(context).length > 0 ? { context } : {};
  };
  return {
    listConnections: async () => {
      const { connections } = await broker.listConnections({});
      return { connections: connections.filter((c) => grants.allows(c.name, caller)) };
    },
    getConnection: async (name) => {
      granted(name);
      return broker.getConnection(name);
    },
    // Each call carries its connection's context values, never the session's own.
    ...admittedCalls(broker, async ({ context: _fromSession, ...request }) => ({ ...request, ...(await contextOf(request.connection)) })),
    curatedTools: (connection) => broker.curatedTools(connection !== null && grants.allows(connection, caller) ? connection : null),
    ...(broker.onCuratedChange ? { onCuratedChange: broker.onCuratedChange.bind(broker) } : {}),
    detectProject: async () => {
      throw new HanactlError(
        'FORBIDDEN',
        'Project folders are not looked at over MCP over HTTP; choose a connection from list_connections.',
      );
    },
    openSession: (request) => broker.openSession(request),
    updateSession: (id, report) => broker.updateSession(id, report),
    closeSession: (id) => broker.closeSession(id),
  };
}
