import type { Engine } from '../../shared/connection-url.js';
import type { DriverConnection, StatementResult } from '../engines/driver.js';

type Row = StatementResult['rows'][number];

/** Where a login could read credentials, asked of the server itself; engines without such a role model have none. */
const PROBES: Partial<Record<Engine, { readonly sql: string; advice(row: Row, user: string): string[] }>> = {
  postgres: {
    sql: `SELECT r.rolsuper AS superuser,
            CASE WHEN to_regrole('pg_read_all_data') IS NULL THEN false
                 ELSE pg_has_role(current_user, 'pg_read_all_data', 'MEMBER') END AS read_all_data
          FROM pg_catalog.pg_roles r WHERE r.rolname = current_user`,
    advice(row, user) {
      if (row.superuser === true)
        return [`${user} logs in as a PostgreSQL superuser, which can read every password hash and stored password on the server.`];
      if (row.read_all_data === true)
        return [`${user} logs in as a member of pg_read_all_data, which can read pg_authid and every user mapping.`];
      return [];
    },
  },
  mysql: {
    sql: `SELECT
            (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = u.g AND PRIVILEGE_TYPE = 'SELECT') AS global_select,
            (SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = u.g AND TABLE_SCHEMA = 'mysql' AND PRIVILEGE_TYPE = 'SELECT') AS mysql_select
          FROM (SELECT CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AS g) u`,
    advice(row, user) {
      if (Number(row.global_select) > 0)
        return [`${user} logs in with SELECT on every database, mysql.* (password hashes, statement logs) included.`];
      if (Number(row.mysql_select) > 0) return [`${user} logs in with SELECT on the mysql database (password hashes, statement logs).`];
      return [];
    },
  },
};

const LEAST_PRIVILEGE =
  'hanactl refuses and masks credential reads on every connection, but agents are safer on a least-privilege role that reads only what they need: see "Least-privilege roles" in docs/security-model.md.';

/**
 * Advice for a person registering or testing a connection whose login can read credentials
 * (a superuser, pg_read_all_data, global SELECT or SELECT on mysql.*). Never throws: a server
 * that does not answer the probe gets no advice rather than a failed test.
 */
export async function privilegeAdvice(connection: DriverConnection, engine: Engine, name: string): Promise<string[]> {
  const probe = PROBES[engine];
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
