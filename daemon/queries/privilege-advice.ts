import type { Engine } from '../../shared/connection-url.js';
import type { DriverConnection } from '../engines/driver.js';
import { ENGINE_TABLE } from '../engines/index.js';

const LEAST_PRIVILEGE =
  'hanactl refuses and masks credential reads on every connection, but agents are safer on a least-privilege role that reads only what they need: see "Least-privilege roles" in docs/security-model.md.';

/**
 * Advice for a person registering or testing a connection whose login can read credentials
 * (the engine's `privilegeProbe`: a PostgreSQL superuser, global SELECT on MySQL, ...). Never throws: a server
 * that does not answer the probe gets no advice rather than a failed test.
 */
export async function privilegeAdvice(connection: DriverConnection, engine: Engine, name: string): Promise<string[]> {
  const probe = ENGINE_TABLE[engine].privilegeProbe;
  if (!probe) return [];
  try {
    const result = await connection.execute(probe.sql, [], { maxRows: 1, timeoutMs: 5000, readOnly: true });
    const row = result.rows[0];
    const found = row ? probe.advice(row, `"${name}"`) : [];
    return found.map((sentence) => `${sentence} ${LEAST_PRIVILEGE}`);
  } catch {
    return [];
  }
}
