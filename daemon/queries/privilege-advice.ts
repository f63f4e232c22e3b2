import type { Engine } from '../../shared/connection-url.js';
import type { DriverConnection } from '../engines/driver.js';
import { ENGINE_TABLE } from '../engines/index.js';
import type { PrivilegeProbe } from '../engines/privilege-probe.js';

const LEAST_PRIVILEGE =
  'hanactl refuses and masks credential reads on every connection, but agents are safer on a least-privilege role that reads only what they need: see "Least-privilege roles" in docs/security-model.md.';

/**
 * Advice for a person registering or testing a connection whose login can read credentials
 * (the engine's `privilegeProbe`: a PostgreSQL superuser, global SELECT on MySQL, ...), and, with
 * `separated` (the connection declares context names), whose login is not bound by what separates
 * rows (its `separation` probe: PostgreSQL row-level security it bypasses); on every connection,
 * what in the database changes ordinary SQL (its `database` probe). Never throws: a server
 * that does not answer the probe gets no advice rather than a failed test.
 */
export async function privilegeAdvice(
  connection: DriverConnection,
  engine: Engine,
  name: string,
  { separated = false }: { separated?: boolean } = {},
): Promise<string[]> {
  const probe = ENGINE_TABLE[engine].privilegeProbe;
  if (!probe) return [];
  const credentials = (await ask(connection, probe, name)).map((sentence) => `${sentence} ${LEAST_PRIVILEGE}`);
  const database = probe.database ? await ask(connection, probe.database, name) : [];
  return separated && probe.separation
    ? [...credentials, ...database, ...(await ask(connection, probe.separation, name))]
    : [...credentials, ...database];
}

/** The sentences of `probe` for the login of `connection`; none when the server does not answer it. */
async function ask(connection: DriverConnection, probe: Omit<PrivilegeProbe, 'separation' | 'database'>, name: string): Promise<string[]> {
  try {
    const result = await connection.execute(probe.sql, [], { maxRows: 1, timeoutMs: 5000, readOnly: true });
    const row = result.rows[0];
    return row ? probe.advice(row, `"${name}"`) : [];
  } catch {
    return [];
  }
}
