import type { Broker } from '../../shim/broker.js';
import { elsewhere, projectsRefused } from '../http/connection-scope.js';

type Call<K extends keyof Broker> = Broker[K];

/**
 * A broker that serves one connection only (an MCP over HTTP session, whose URL fixes it), as the
 * API's connection scope does for its clients: the listing holds only it, any other name is "not
 * on this endpoint" without naming the others, project detection is refused.
 */
export function scopedBroker(broker: Broker, scope: string): Broker {
  const only = (name: string) => {
    if (name !== scope) throw elsewhere(name, scope);
  };
  const checked = <
    K extends 'query' | 'listSchemas' | 'listTables' | 'describeTable' | 'listRoutines' | 'explainQuery' | 'sampleRows' | 'searchObjects',
  >(
    key: K,
  ): Call<K> =>
    ((request: { connection: string }, signal?: AbortSignal, ...rest: unknown[]) => {
      only(request.connection);
      return (broker[key] as (r: unknown, s?: AbortSignal, ...more: unknown[]) => unknown)(request, signal, ...rest);
    }) as Call<K>;
  return {
    listConnections: async () => ({ connections: [await broker.getConnection(scope)] }),
    getConnection: async (name, scopeOfCall) => {
      only(name);
      return broker.getConnection(name, scopeOfCall);
    },
    query: checked('query'),
    listSchemas: checked('listSchemas'),
    listTables: checked('listTables'),
    describeTable: checked('describeTable'),
    listRoutines: checked('listRoutines'),
    explainQuery: checked('explainQuery'),
    sampleRows: checked('sampleRows'),
    searchObjects: checked('searchObjects'),
    curatedTools: (connection) => broker.curatedTools(connection === scope ? scope : null),
    callCurated: (request, signal, approval) => {
      only(request.connection);
      return broker.callCurated(request, signal, approval);
    },
    ...(broker.onCuratedChange ? { onCuratedChange: broker.onCuratedChange.bind(broker) } : {}),
    detectProject: async () => {
      throw projectsRefused(scope);
    },
    openSession: (request) => broker.openSession(request),
    updateSession: (id, report) => broker.updateSession(id, report),
    closeSession: (id) => broker.closeSession(id),
  };
}
