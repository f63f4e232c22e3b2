import type { Broker } from '../../shim/broker.js';
import { elsewhere, projectsRefused } from '../http/connection-scope.js';
import { admittedCalls } from './admitted-calls.js';

/**
 * A broker that serves one connection only (an MCP over HTTP session, whose URL fixes it), as the
 * API's connection scope does for its clients: the listing holds only it, any other name is "not
 * on this endpoint" without naming the others, project detection is refused.
 */
export function scopedBroker(broker: Broker, scope: string): Broker {
  const only = (name: string) => {
    if (name !== scope) throw elsewhere(name, scope);
  };
  return {
    listConnections: async () => ({ connections: [await broker.getConnection(scope)] }),
    getConnection: async (name, scopeOfCall) => {
      only(name);
      return broker.getConnection(name, scopeOfCall);
    },
    ...admittedCalls(broker, (request) => {
      only(request.connection);
      return request;
    }),
    curatedTools: (connection) => broker.curatedTools(connection === scope ? scope : null),
    ...(broker.onCuratedChange ? { onCuratedChange: broker.onCuratedChange.bind(broker) } : {}),
    detectProject: async () => {
      throw projectsRefused(scope);
    },
    openSession: (request) => broker.openSession(request),
    updateSession: (id, report) => broker.updateSession(id, report),
    closeSession: (id) => broker.closeSession(id),
  };
}
