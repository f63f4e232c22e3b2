import type { HanaConnection } from '../../../../../daemon/engines/hana/hana-connection.js';
import { type InProcessDaemon, inProcessDaemon } from '../../../../helpers/in-process-daemon.js';

/**
 * The daemon's whole graph (createDaemon) with a recorded @sap/hana-client behind its real pools:
 * every connection a pool opens to SAP HANA is `conn`, so a test reads what reached the client.
 */
export function recordedHanaDaemon(dir: string, conn: HanaConnection): Promise<InProcessDaemon> {
  return inProcessDaemon(dir, {
    connectTimeoutMs: 1000,
    maxPools: 2,
    loadDriverFactory: async () => () => ({ engine: 'hana', connect: async () => conn }),
  });
}
