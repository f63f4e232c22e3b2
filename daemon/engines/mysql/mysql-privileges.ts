import type { PrivilegeProbe } from '../privilege-probe.js';

/**
 * The SQL SECURITY DEFINER routines the login may call (information_schema.ROUTINES lists those it
 * has a privilege on), but the server's own (sys, mysql).
 */
const DEFINER_ROUTINES = `information_schema.ROUTINES r WHERE r.SECURITY_TYPE = 'DEFINER' AND r.ROUTINE_SCHEMA NOT IN ('sys', 'mysql')`;

/** The SQL SECURITY INVOKER routines the login may call, but the server's own. */
const INVOKER_ROUTINES = `information_schema.ROUTINES r WHERE r.SECURITY_TYPE = 'INVOKER' AND r.ROUTINE_SCHEMA NOT IN ('sys', 'mysql')`;

/**
 * The views the login may use but whose definition it may not read: information_schema.VIEWS lists
 * a view to a login with any privilege on it, and shows its definition only to its definer or to
 * a login holding SELECT and SHOW VIEW on it.
 */
const UNREAD_VIEWS = `information_schema.VIEWS v WHERE v.VIEW_DEFINITION = ''`;

/** How many unreadable views the advice names. */
const NAMED_VIEWS = 5;

/** How a login gets to read routine bodies, so that hanactl can judge them. */
const READ_BODIES = 'GRANT SELECT ON mysql.proc, or SHOW CREATE ROUTINE on MariaDB 11.3+, SHOW_ROUTINE on MySQL 8.0.20+, lets it read them';

/** Privileges with which a routine's owner stops other sessions, changes server settings or reaches the host's files. */
const POWERFUL = [
  'SUPER',
  'FILE',
  'PROCESS',
  'CONNECTION ADMIN',
  'CONNECTION_ADMIN',
  'SYSTEM_VARIABLES_ADMIN',
  'SHUTDOWN',
  'RELOAD',
  'BINLOG ADMIN',
  'REPLICATION MASTER ADMIN',
  'READ_ONLY ADMIN',
]
  .map((p) => `'${p}'`)
  .join(', ');

/**
 * Global SELECT, or SELECT on the mysql database, reads password hashes and statement logs.
 * SUPER (MariaDB) or SYSTEM_VARIABLES_ADMIN (MySQL 8) sets server-wide variables: `SET GLOBAL`
 * inside a stored function the login may call runs even in a read-only transaction, and it
 * outlives the call (no rollback, no connection reset undoes a global). SQL SECURITY DEFINER
 * routines the login may call run with their owner's rights, whatever the login's own; where the
 * login may read the owners' privileges, those who hold the powerful ones are counted. Views the
 * login may select from but whose definition it may not read are counted and the first named:
 * hanactl refuses them wherever it judges what a call reaches.
 */
export const MYSQL_PRIVILEGE_PROBE: PrivilegeProbe = {
  sql: `SELECT
          (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = u.g AND PRIVILEGE_TYPE = 'SELECT') AS global_select,
          (SELECT COUNT(*) FROM information_schema.SCHEMA_PRIVILEGES WHERE GRANTEE = u.g AND TABLE_SCHEMA = 'mysql' AND PRIVILEGE_TYPE = 'SELECT') AS mysql_select,
          (SELECT COUNT(*) FROM information_schema.USER_PRIVILEGES WHERE GRANTEE = u.g AND PRIVILEGE_TYPE IN ('SUPER', 'SYSTEM_VARIABLES_ADMIN')) AS sets_globals,
          (SELECT COUNT(*) FROM ${DEFINER_ROUTINES}) AS definer_routines,
          (SELECT COUNT(*) FROM ${DEFINER_ROUTINES} AND r.ROUTINE_DEFINITION IS NULL) AS hidden_definer_routines,
          (SELECT COUNT(*) FROM ${INVOKER_ROUTINES} AND r.ROUTINE_DEFINITION IS NULL) AS hidden_invoker_routines,
          (SELECT COUNT(*) FROM ${UNREAD_VIEWS}) AS unread_views,
          (SELECT GROUP_CONCAT(x.n ORDER BY x.n SEPARATOR ', ') FROM (SELECT CONCAT(v.TABLE_SCHEMA, '.', v.TABLE_NAME) AS n FROM ${UNREAD_VIEWS}
             ORDER BY v.TABLE_SCHEMA, v.TABLE_NAME LIMIT ${NAMED_VIEWS}) x) AS unread_view_names,
          CONCAT('''', SUBSTRING_INDEX(CURRENT_USER(), '@', 1), '''@''', SUBSTRING_INDEX(CURRENT_USER(), '@', -1), '''') AS login,
          (SELECT COUNT(*) FROM ${DEFINER_ROUTINES} AND EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES p
             WHERE p.GRANTEE = CONCAT('''', SUBSTRING_INDEX(r.DEFINER, '@', 1), '''@''', SUBSTRING_INDEX(r.DEFINER, '@', -1), '''')
               AND p.PRIVILEGE_TYPE IN (${POWERFUL}))) AS powerful_definer_routines
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
    const definers = Number(row.definer_routines);
    const powerful = Number(row.powerful_definer_routines);
    const hidden = Number(row.hidden_definer_routines);
    if (definers > 0) {
      const owners =
        powerful > 0
          ? `, ${powerful} of them owned by a login that may stop other sessions, change server settings or reach the host's files`
          : '';
      const unread = hidden > 0 ? ` It may not read the body of ${hidden} of them, and hanactl refuses those (${READ_BODIES}).` : '';
      advice.push(
        `${user} may call ${definers} SQL SECURITY DEFINER routine${definers === 1 ? '' : 's'}${owners}: they run with their owner's rights, and a read-only transaction does not stop KILL, SET GLOBAL or INTO OUTFILE in them. hanactl judges each body before a read runs it.${unread}`,
      );
    }
    const hiddenInvokers = Number(row.hidden_invoker_routines);
    if (hiddenInvokers > 0) {
      advice.push(
        `${user} may call ${hiddenInvokers} SQL SECURITY INVOKER routine${hiddenInvokers === 1 ? '' : 's'} whose body it may not read: what ${hiddenInvokers === 1 ? 'it calls' : 'they call'} cannot be judged, so hanactl refuses ${hiddenInvokers === 1 ? 'it' : 'them'} on read-only connections and where rows are separated (${READ_BODIES}).`,
      );
    }
    const unreadViews = Number(row.unread_views);
    if (unreadViews > 0) {
      const names = String(row.unread_view_names ?? '');
      const first = names.split(', ')[0] ?? 'db.view';
      const login = String(row.login ?? 'its login');
      const more = unreadViews > NAMED_VIEWS ? `, and ${unreadViews - NAMED_VIEWS} more` : '';
      advice.push(
        `${user} may select from ${unreadViews} view${unreadViews === 1 ? '' : 's'} whose definition it may not read (${names}${more}): what ${unreadViews === 1 ? 'it runs' : 'they run'} cannot be judged, so hanactl refuses ${unreadViews === 1 ? 'it' : 'them'} on read-only calls and where rows are separated. SHOW VIEW lets it read ${unreadViews === 1 ? 'it' : 'each'} (GRANT SHOW VIEW ON ${first} TO ${login}).`,
      );
    }
    return advice;
  },
};
