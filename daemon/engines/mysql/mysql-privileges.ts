import type { PrivilegeProbe } from '../privilege-probe.js';

/** Global SELECT, or SELECT on the mysql database, reads password hashes and statement logs. */
export const MYSQL_PRIVILEGE_PROBE: PrivilegeProbe = {
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
};
