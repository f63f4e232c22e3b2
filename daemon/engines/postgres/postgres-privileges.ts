import type { PrivilegeProbe } from '../privilege-probe.js';

/** A superuser or a member of pg_read_all_data reads every password hash and user mapping. */
export const POSTGRES_PRIVILEGE_PROBE: PrivilegeProbe = {
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
};
