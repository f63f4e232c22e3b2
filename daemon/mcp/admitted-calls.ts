import type { Broker } from '../../shim/broker.js';

/** The broker's calls whose request names a connection: queries, catalog calls, curated tools. */
export type ConnectionCall =
  | 'query'
  | 'listSchemas'
  | 'listTables'
  | 'describeTable'
  | 'listRoutines'
  | 'explainQuery'
  | 'sampleRows'
  | 'searchObjects'
  | 'callCurated';

/** A request as `admit` sees it: the connection it names, and the context values it carries. */
export type ConnectionRequest = { readonly connection: string; readonly context?: unknown };

/**
 * Every call of `broker` that names a connection, passed on once `admit` has taken its request:
 * `admit` throws to refuse it, or returns the request to send (the same one, or with what the
 * wrapper owns replaced). The other arguments (signal, approval hooks) pass unchanged. One place,
 * so a broker that guards connections cannot leave a call out.
 */
export function admittedCalls(
  broker: Broker,
  admit: (request: ConnectionRequest) => ConnectionRequest | Promise<ConnectionRequest>,
): Pick<Broker, ConnectionCall> {
  const pass = <K extends ConnectionCall>(key: K): Broker[K] =>
    (async (request: ConnectionRequest, ...rest: unknown[]) =>
      (broker[key] as (r: unknown, ...more: unknown[]) => unknown)(await admit(request), ...rest)) as Broker[K];
  return {
    query: pass('query'),
    listSchemas: pass('listSchemas'),
    listTables: pass('listTables'),
    describeTable: pass('describeTable'),
    listRoutines: pass('listRoutines'),
    explainQuery: pass('explainQuery'),
    sampleRows: pass('sampleRows'),
    searchObjects: pass('searchObjects'),
    callCurated: pass('callCurated'),
  };
}
