import type { PrivilegeProbe } from '../privilege-probe.js';

/**
 * Global SELECT, or SELECT on the mysql database, reads password hashes and statement logs.
 * SUPER (MariaDB) or SYSTEM_VARIABLES_ADMIN (MySQL 8) sets server-wide variables: `SET GLOBAL`
 * inside a stored function the login may call runs even in a read-only transaction, and it
 * outlives the call (no rollback, no connection reset undoes a global).
 */
export const MYSQL_PRIVILEGE_PROBE: PrivilegeProbe = {
  sql: `SELECT
          (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = u.g AND PRIVILEGE_TYPE = 'SELECT') AS global_select,
          (SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = u.g AND TABLE_SCHEMA = 'mysql' AND PRIVILEGE_TYPE = 'SELECT') AS mysql_select,
          (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = u.g AND PRIVILEGE_TYPE IN ('SUPER', 'SYSTEM_VARIABLES_ADMIN')) AS sets_globals
        FROM (SELECT CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AS g) u`,
  advice(row, user) {
    const advice: string[] = [];
    if (Number(row.global_select) > 0)
      advice.push(`${user} logs in with SELECT on every database, mysql.* (password hashes, statement logs) included.`);
    else if (Number(row.mysql_select) > 0)
      advice.push(`${user} logs in with SELECT on the mysql database (password hashes, statement logs).`);
    if (Number(row.sets_globals) > 0)
      advice.push(
        `${user} logs in with SUPER or SYSTEM_VARIABLES_ADMIN: a stored function it may call can change server-wide settings (SET GLOBAL), which no read-only transaction stops and which outlive the call.`,
      );
    return advice;
  },
};
