import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';

const readOnly = { dialect: 'mysql', allowWrite: false } as const;
const writable = { dialect: 'mysql', allowWrite: true } as const;
const pgRead = { dialect: 'postgres', allowWrite: false } as const;

describe('statements that show credentials', () => {
  test.each([
    'SHOW GRANTS',
    'show grants for current_user',
    "SHOW GRANTS FOR 'app'@'%'",
    'SHOW CREATE USER CURRENT_USER',
    "show create user 'root'@'localhost'",
    'SHOW CREATE SERVER s',
    'SELECT * FROM mysql.user',
    'SELECT User, Password FROM `mysql`.`user`',
    'select * from MYSQL . USER',
    'SELECT Priv FROM mysql.global_priv',
    'SELECT * FROM global_priv',
    'SELECT authentication_string FROM user',
    'SELECT Password FROM mysql.servers',
    'SELECT * FROM mysql.password_history',
    'SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM mysql.user)',
    'DESCRIBE mysql.user',
  ])('%s is refused on read-only and writable MariaDB/MySQL connections', (sql) => {
    for (const options of [readOnly, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/password hash|authentication data|credentials/);
    }
  });

  test('the message says why and what to do instead', () => {
    const verdict = checkStatement('SHOW GRANTS', readOnly);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) {
      expect(verdict.message).toMatch(
        /^Refused: SHOW GRANTS shows authentication data \(password hashes or stored passwords\), which hanactl does not return on any connection\. /,
      );
      expect(verdict.hint).toMatch(/information_schema\.USER_PRIVILEGES/);
    }
  });

  test.each([
    'SELECT * FROM information_schema.USER_PRIVILEGES',
    'SELECT * FROM users',
    'SELECT user FROM t',
    'SELECT CURRENT_USER()',
    'SELECT * FROM app.user',
    'SELECT password FROM accounts',
    "SELECT 'mysql.user'",
    'SHOW TABLES',
    'SHOW PRIVILEGES',
    'SHOW CREATE TABLE t',
  ])('%s still runs', (sql) => {
    expect(checkStatement(sql, readOnly)).toEqual({ ok: true, kind: 'read' });
  });

  test.each([
    'SELECT rolname, rolpassword FROM pg_authid',
    'SELECT * FROM pg_catalog.pg_authid',
    'SELECT passwd FROM pg_shadow',
    'SELECT umoptions FROM pg_user_mappings',
    'SELECT umoptions FROM pg_user_mapping',
    'SELECT subconninfo FROM pg_subscription',
  ])('PostgreSQL: %s is refused whatever the role may read', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      const verdict = checkStatement(sql, options);
      expect(verdict).toMatchObject({ ok: false });
      if (!verdict.ok) expect(verdict.message).toMatch(/password|credentials/);
    }
  });

  test('PostgreSQL: pg_roles, which masks passwords itself, still runs', () => {
    expect(checkStatement('SELECT rolname, rolpassword FROM pg_roles', pgRead)).toEqual({ ok: true, kind: 'read' });
  });

  test.each([
    "SELECT table_to_xml('1260', true, false, '')",
    "SELECT substr(x, strpos(x, 'SCRAM'), 140) FROM (SELECT table_to_xml('1260', true, false, '')::text AS x) s",
    "SELECT table_to_xml(' 1418', true, false, '')",
    "SELECT table_to_xmlschema('+1260', true, false, '')",
    "SELECT table_to_xml_and_xmlschema('', true, false, '')",
    "SELECT table_to_xml(1260::regclass, true, false, '')",
    "SELECT table_to_xml('pg_catalog.pg_authid'::regclass, true, false, '')",
    "SELECT table_to_xml('PG_CATALOG.\"pg_user_mapping\"', true, false, '')",
  ])('PostgreSQL: %s (a relation by OID or expression) is refused', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      expect(checkStatement(sql, options), sql).toMatchObject({ ok: false });
    }
  });

  test.each([
    "SELECT histogram_bounds::text FROM pg_stats WHERE tablename = 'pg_authid' AND attname = 'rolpassword'",
    'SELECT most_common_vals FROM pg_catalog.pg_stats',
    'SELECT stavalues1::text FROM pg_statistic WHERE starelid = 1260',
    'SELECT * FROM "pg_statistic"',
    'SELECT * FROM pg_stats_ext',
    'SELECT * FROM pg_stats_ext_exprs',
    'SELECT * FROM pg_statistic_ext_data',
    'SELECT 1 WHERE EXISTS (SELECT 1 FROM pg_stats s WHERE s.null_frac > 0)',
  ])('PostgreSQL: planner statistics (%s) are refused as a credential read', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/sample values of every column/);
    }
  });

  // TOAST tables (relkind t, schemas pg_toast and pg_toast_temp_N) hold the out-of-line values of
  // another relation: pg_toast_2619 is pg_statistic's, pg_toast_1260 pg_authid's.
  test.each([
    "select encode(substr(chunk_data, position('SCRAM-SHA-256'::bytea in chunk_data), 140), 'hex') from pg_toast.pg_toast_2619 where position('SCRAM-SHA-256'::bytea in chunk_data) > 0 limit 1",
    'SELECT chunk_data FROM pg_toast.pg_toast_1260',
    'SELECT * FROM PG_TOAST.PG_TOAST_6100',
    'SELECT * FROM "pg_toast"."pg_toast_1418"',
    'SELECT * FROM pg_toast_3429',
    'SELECT * FROM "pg_toast_2619"',
    'SELECT * FROM pg_toast_temp_3.pg_toast_16500',
    'SELECT 1 WHERE EXISTS (SELECT 1 FROM pg_toast.pg_toast_16401 t WHERE t.chunk_seq = 0)',
    "SELECT table_to_xml('pg_toast.pg_toast_2619', true, false, '')",
    'SELECT table_to_xml(\'"pg_toast"."pg_toast_2619"\', true, false, \'\')',
    'WITH x AS (SELECT * FROM Pg_Toast_Temp_12.pg_toast_20000) SELECT 1 FROM x',
  ])('PostgreSQL: a storage (TOAST) table (%s) is refused', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'storage-table' });
      if (!verdict.ok) expect(verdict.message).toMatch(/stores the out-of-line values of another relation/);
    }
  });

  test.each(['SELECT toast FROM t', 'SELECT * FROM pg_toaster', 'SELECT * FROM toast_2619', "SELECT 'pg_toast.pg_toast_2619'"])(
    'PostgreSQL: %s (no storage table) still runs',
    (sql) => {
      expect(checkStatement(sql, pgRead)).toEqual({ ok: true, kind: 'read' });
    },
  );

  test.each([
    "SELECT current_setting('primary_conninfo')",
    "SELECT current_setting('RESTORE_COMMAND', true)",
    'SHOW primary_conninfo',
    'show Archive_Command',
    'SHOW "ssl_passphrase_command"',
    "SELECT setting FROM pg_settings WHERE name = 'archive_cleanup_command'",
    "SELECT setting FROM pg_settings WHERE name IN ('recovery_end_command')",
    "SELECT setting FROM pg_file_settings WHERE name = 'primary_conninfo'",
  ])('PostgreSQL: a setting that can hold a secret (%s) is refused', (sql) => {
    for (const options of [pgRead, { ...pgRead, allowWrite: true }]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false });
      if (!verdict.ok && !sql.includes('pg_file_settings')) expect(verdict.message).toMatch(/can hold a password or a command/);
    }
  });

  test.each(["SELECT current_setting('work_mem')", 'SHOW search_path', "SELECT setting FROM pg_settings WHERE name = 'archive_mode'"])(
    'PostgreSQL: %s (a setting that holds no secret) still runs',
    (sql) => {
      expect(checkStatement(sql, pgRead)).toEqual({ ok: true, kind: 'read' });
    },
  );

  test.each([
    'SELECT @@report_password',
    'SELECT @@global.report_password',
    'select @@GLOBAL.Report_Password',
    'SELECT @@session.`report_password`',
    "SHOW VARIABLES LIKE 'report_password'",
    "SHOW GLOBAL VARIABLES LIKE 'report%'",
    "SHOW SESSION VARIABLES LIKE '%pass%'",
    "SHOW VARIABLES LIKE 'report\\_password'",
    'SHOW VARIABLES',
    'show global variables',
    "SHOW VARIABLES WHERE Variable_name LIKE 'rep%'",
    "SHOW VARIABLES WHERE Variable_name = 'x' OR 1 = 1",
    "SHOW VARIABLES LIKE 'max_connections' OR 1",
    'SELECT * FROM information_schema.GLOBAL_VARIABLES',
    'SELECT VARIABLE_VALUE FROM information_schema.SESSION_VARIABLES',
    'SELECT * FROM information_schema.SYSTEM_VARIABLES',
    "SELECT * FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'report_password'",
    "SELECT * FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'max_connections' OR 1 = 1",
    'SELECT * FROM performance_schema.global_variables',
    'SELECT * FROM performance_schema.variables_by_thread',
    'SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM information_schema.global_variables)',
  ])("MariaDB/MySQL: %s (report_password, a replica's password shown in clear, by name or among every variable) is refused", (sql) => {
    for (const options of [readOnly, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/report_password/);
    }
  });

  test.each([
    'SELECT @@max_connections',
    'SELECT @@global.wsrep_sst_auth',
    "SHOW VARIABLES LIKE 'max_connections'",
    "SHOW GLOBAL VARIABLES LIKE 'innodb%'",
    "SHOW SESSION VARIABLES LIKE 'sql_mode';",
    "SHOW VARIABLES WHERE Variable_name = 'version'",
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'max_connections'",
    "SELECT variable_name, variable_value FROM information_schema.SYSTEM_VARIABLES WHERE variable_name = 'sql_mode'",
    'SELECT * FROM app.settings_variables',
  ])('MariaDB/MySQL: %s (a variable named by a constant other than report_password) still runs', (sql) => {
    expect(checkStatement(sql, readOnly)).toEqual({ ok: true, kind: 'read' });
  });

  test.each([
    ['SHOW ALL', 'SHOW ALL'],
    ['SELECT * FROM pg_show_all_settings()', 'pg_show_all_settings()'],
    ["SELECT current_setting('primary_' || 'conninfo')", 'current_setting() of a name chosen when it runs'],
    ['SELECT current_setting(name) FROM t', 'current_setting() of a name chosen when it runs'],
    ["SELECT * FROM query_to_xml('SHOW ALL', true, false, '')", 'SHOW ALL'],
  ])('PostgreSQL: %s reads settings wholesale, for the server to judge', (sql, settings) => {
    const verdict = checkStatement(sql, pgRead, true);
    expect(verdict).toMatchObject({ ok: true, references: { settings } });
  });

  test.each(["SELECT current_setting('work_mem')", 'SHOW work_mem', 'SELECT 1'])('PostgreSQL: %s reads no setting wholesale', (sql) => {
    const verdict = checkStatement(sql, pgRead, true);
    expect(verdict.ok && verdict.references?.settings).toBeFalsy();
  });

  test('PostgreSQL: table_to_xml of an ordinary table named as a literal still runs', () => {
    expect(checkStatement("SELECT table_to_xml('public.orders', true, false, '')", pgRead)).toEqual({ ok: true, kind: 'read' });
  });

  test.each([
    'SELECT * FROM mysql.general_log',
    'SELECT argument FROM `mysql`.`general_log`',
    'SELECT sql_text FROM MYSQL.SLOW_LOG',
    'SHOW BINLOG EVENTS',
    "SHOW BINLOG EVENTS IN 'mysql-bin.000001'",
    'SHOW RELAYLOG EVENTS',
  ])("MariaDB: %s (other sessions' statement text) is refused", (sql) => {
    for (const options of [readOnly, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/other sessions' statements|authentication data/);
    }
  });

  // Every statement and table that shows another session's statement text, plan or constants
  // (MariaDB's SHOW list in mysql.help_topic, information_schema, performance_schema and sys).
  test.each([
    'SHOW ENGINE INNODB STATUS',
    'show engine innodb status',
    'SHOW ENGINE InnoDB MUTEX',
    'SHOW ENGINE PERFORMANCE_SCHEMA STATUS',
    'SHOW ENGINE ARIA LOGS',
    'SHOW ENGINES /* then */ ; SHOW ENGINE INNODB STATUS',
    '/*!50000 SHOW ENGINE INNODB STATUS */',
    'SHOW INNODB STATUS',
    'SHOW MUTEX STATUS',
    'SHOW EXPLAIN FOR 86',
    'SHOW EXPLAIN FORMAT=JSON FOR 86',
    'SHOW EXPLAIN FORMAT = JSON FOR 86',
    'SHOW ANALYZE FOR 86',
    'SHOW ANALYZE FORMAT=JSON FOR 86',
    'EXPLAIN FOR CONNECTION 86',
    'EXPLAIN FORMAT=JSON FOR CONNECTION 86',
    'DESCRIBE FOR CONNECTION 86',
    'SHOW SLAVE STATUS',
    "SHOW SLAVE 'm1' STATUS",
    'SHOW REPLICA STATUS',
    'SHOW ALL SLAVES STATUS',
    'SHOW ALL REPLICAS STATUS',
    'SHOW PROCESSLIST',
    'SHOW FULL PROCESSLIST',
    'SELECT * FROM information_schema.INNODB_LOCKS',
    'SELECT lock_data FROM information_schema.innodb_lock_waits w JOIN information_schema.`INNODB_LOCKS` l ON 1',
    'SELECT * FROM INFORMATION_SCHEMA.INNODB_TRX',
    'SELECT * FROM performance_schema.data_locks',
    'SELECT * FROM performance_schema.data_lock_waits',
    'SELECT sys.ps_thread_trx_info(5)',
    'SELECT sys.ps_thread_stack(5, FALSE)',
  ])("MariaDB: %s (another session's statement text, plan or constants) is refused", (sql) => {
    for (const options of [readOnly, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false });
      if (!verdict.ok && sql.includes(';') === false) expect(verdict.message, sql).toMatch(/other sessions' statements/);
    }
  });

  test.each([
    'SHOW ENGINES',
    'SHOW STATUS',
    'SHOW GLOBAL STATUS',
    'SHOW PROFILES',
    'SHOW WARNINGS',
    'SHOW ERRORS',
    'SHOW TABLE STATUS',
    'SHOW MASTER STATUS',
    'SHOW VARIABLES LIKE "version"',
    'SELECT * FROM t FOR UPDATE',
    'EXPLAIN SELECT * FROM t',
    'SELECT engine FROM information_schema.engines',
  ])('MariaDB: %s (own session or no statement text) still runs', (sql) => {
    expect(checkStatement(sql, writable), sql).toMatchObject({ ok: true });
  });

  test.each([
    'SELECT * FROM user',
    'SELECT Priv FROM `global_priv`',
    'SELECT * FROM general_log',
    'select * from SLOW_LOG',
    'SELECT * FROM servers',
  ])('MariaDB: %s is refused on a connection whose default database is mysql', (sql) => {
    expect(checkStatement(sql, { ...readOnly, database: 'mysql' })).toMatchObject({ ok: false, rule: 'credential-read' });
    expect(checkStatement(sql, { ...readOnly, database: 'MySQL' })).toMatchObject({ ok: false, rule: 'credential-read' });
  });

  // sql_yacc.yy table_ident `'.' ident`: a lone dot names the current database's table.
  test.each([
    'SELECT u.User, HEX(u.Password) FROM db d RIGHT JOIN .user u ON 1',
    'SELECT * FROM .user',
    'SELECT * FROM . user',
    'SELECT * FROM /* c */ . `global_priv`',
    'SELECT * FROM db JOIN.`servers` ON 1',
    'SELECT * FROM (.password_history)',
    'SELECT * FROM t, .general_log',
  ])('MariaDB: %s is refused on a connection whose default database is mysql', (sql) => {
    expect(checkStatement(sql, { ...readOnly, database: 'mysql' })).toMatchObject({ ok: false, rule: 'credential-read' });
  });

  test.each(['SELECT * FROM .threads', 'SELECT * FROM t JOIN . threads ON 1'])(
    'MariaDB: %s is refused on a connection whose default database is performance_schema',
    (sql) => {
      expect(checkStatement(sql, { ...readOnly, database: 'performance_schema' })).toMatchObject({ ok: false, rule: 'credential-read' });
    },
  );

  test('MariaDB: a column or a table of another schema named user still runs on a connection to mysql', () => {
    expect(checkStatement('SELECT u.user FROM db u', { ...readOnly, database: 'mysql' })).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement('SELECT * FROM app.user', { ...readOnly, database: 'mysql' })).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement('SELECT * FROM .user', { ...readOnly, database: 'app' })).toEqual({ ok: true, kind: 'read' });
  });

  test('MariaDB: unqualified user still runs on a connection to another database', () => {
    expect(checkStatement('SELECT * FROM user', { ...readOnly, database: 'app' })).toEqual({ ok: true, kind: 'read' });
    expect(checkStatement('SELECT user FROM t', readOnly)).toEqual({ ok: true, kind: 'read' });
  });
});
