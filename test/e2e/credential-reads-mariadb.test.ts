import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { expectStatementTextRefused } from '../helpers/statement-text.js';

const available = await serverAvailable('mysql');
const USER = `hanactl_cred_${process.pid}`;
const PLANTED = `S3cretPlanted-${process.pid}`;
const LEAK = `LeakMe-${process.pid}`;

function connectionOptions(database?: string) {
  const u = new URL(MYSQL_URL);
  return { host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), ...(database ? { database } : {}) };
}

/**
 * No secret reaches a tool result on a MariaDB connection as root, marked read-only: not through
 * sample_rows, the statement logs, the binary log, a connection whose database is `mysql`, or
 * another session's statement text in the process list, performance_schema or sys, in any form.
 */
describe.skipIf(!available)('MariaDB credentials stay out of tool results on a root connection', () => {
  const home = new TestHome();
  let admin: mysql.Connection;
  let shim: ShimHandle;
  let inMysql: ShimHandle;
  let hash = '';

  beforeAll(async () => {
    admin = await mysql.createConnection(connectionOptions());
    await admin.query(`CREATE USER '${USER}'@'%' IDENTIFIED BY '${PLANTED}'`);
    const [rows] = await admin.query(`SELECT authentication_string AS h FROM mysql.user WHERE User = ?`, [USER]);
    hash = String((rows as { h: string }[])[0]?.h ?? '');
    expect(hash).toMatch(/^\*[0-9A-F]{40}$/);
    const mysqlUrl = new URL(MYSQL_URL);
    mysqlUrl.pathname = '/mysql';
    await home.ok(['add', '--no-test', '--no-password', 'maria', MYSQL_URL]);
    await home.ok(['add', '--no-test', '--no-password', 'mariasys', mysqlUrl.toString()]);
    shim = await startShim(home.env, ['--connection', 'maria']);
    inMysql = await startShim(home.env, ['--connection', 'mariasys']);
  });

  afterAll(async () => {
    await shim?.close();
    await inMysql?.close();
    await home.dispose();
    await admin?.query(`DROP USER IF EXISTS '${USER}'@'%'`).catch(() => {});
    await admin?.query(`DROP USER IF EXISTS '${USER}_a'@'%'`).catch(() => {});
    await admin?.end();
  });

  const noSecret = (result: unknown) => {
    const all = JSON.stringify(result);
    expect(all).not.toContain(hash.slice(1, 21));
    expect(all).not.toContain(PLANTED);
    expect(all).not.toContain(LEAK);
  };

  it.each(['global_priv', 'user', 'GLOBAL_PRIV', 'general_log', 'slow_log', 'servers'])(
    'sample_rows of mysql.%s is refused',
    async (table) => {
      const result = await shim.call('sample_rows', { table, schema: 'mysql', limit: 50 });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Refused: mysql\.\w+ (shows authentication data|holds the text of other sessions' statements)/);
      noSecret(result);
    },
  );

  it('on a connection to the mysql database, unqualified credential tables are refused in run_query, explain_query and sample_rows', async () => {
    // explain_query too: the optimizer reads a table's row matched by its primary key while it plans
    // ("Impossible WHERE noticed after reading const tables"), so a plan can answer a question about it.
    for (const tool of ['run_query', 'explain_query'])
      for (const sql of [
        'SELECT * FROM user',
        "SELECT 1 FROM user WHERE Host = 'localhost' AND User = 'root'",
        'SELECT * FROM general_log',
      ]) {
        const result = await inMysql.call(tool, { sql });
        expect(result.isError, `${tool}: ${sql}: ${textOf(result)}`).toBe(true);
        expect(textOf(result)).toMatch(/rule: credential-read/);
        noSecret(result);
      }
    const sample = await inMysql.call('sample_rows', { table: 'global_priv' });
    expect(sample.isError).toBe(true);
    noSecret(sample);
  });

  it("on a connection to the mysql database, a credential table after a lone dot is the current database's and is refused", async () => {
    // sql_yacc.yy table_ident `'.' ident`: `.user` is the current database's user table.
    const hex = Buffer.from(hash).toString('hex').toUpperCase();
    for (const tool of ['run_query', 'explain_query'])
      for (const sql of [
        'SELECT u.User, HEX(u.Password) FROM db d RIGHT JOIN .user u ON 1',
        'SELECT User, HEX(authentication_string) FROM . user',
        'SELECT u.User FROM db d JOIN.`user` u ON 1',
        'SELECT HEX(Priv) FROM /* c */ . global_priv',
      ]) {
        const result = await inMysql.call(tool, { sql });
        expect(result.isError, `${tool}: ${sql}: ${textOf(result)}`).toBe(true);
        expect(textOf(result)).toMatch(/rule: credential-read/);
        noSecret(result);
        expect(JSON.stringify(result)).not.toContain(hex.slice(2, 42));
      }
  });

  it.each(['SELECT * FROM mysql.general_log', 'SELECT sql_text FROM mysql.slow_log', 'SHOW BINLOG EVENTS', 'SHOW RELAYLOG EVENTS'])(
    'run_query refuses %s',
    async (sql) => {
      const result = await shim.call('run_query', { sql });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Refused: .*other sessions' statements.*\(rule: credential-read\)/);
    },
  );

  it("refuses another session's statement text in the process list, however it is transformed", async () => {
    const other = await mysql.createConnection(connectionOptions());
    const [idRows] = await other.query('SELECT CONNECTION_ID() AS id');
    const id = (idRows as { id: number }[])[0]?.id;
    const running = other.query(`SELECT SLEEP(60) AS s, PASSWORD('${LEAK}') AS p, 'IDENTIFIED BY "${LEAK}"' AS q`).catch(() => undefined);
    try {
      // Wait for the statement to be on the server (polled, not slept).
      for (;;) {
        const [rows] = await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?', [
          id,
          '%SLEEP(60)%',
        ]);
        if (Number((rows as { n: number }[])[0]?.n) > 0) break;
      }
      // The review's inputs: a transform of the statement text undoes masking of the cell, so the
      // text is refused before it is read.
      for (const sql of [
        `SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = ${id}`,
        'SELECT HEX(INFO) FROM information_schema.PROCESSLIST',
        'SELECT REVERSE(INFO) FROM information_schema.PROCESSLIST',
        'SELECT TO_BASE64(INFO) FROM information_schema.PROCESSLIST',
        'SHOW FULL PROCESSLIST',
        'SHOW PROCESSLIST',
        'SELECT HEX(PROCESSLIST_INFO) FROM performance_schema.threads',
        'SELECT HEX(SQL_TEXT) FROM performance_schema.events_statements_current',
        'SELECT * FROM sys.processlist',
      ]) {
        const result = await shim.call('run_query', { sql });
        expectStatementTextRefused(result, sql, LEAK);
        noSecret(result);
      }
    } finally {
      await admin.query(`KILL QUERY ${Number(id)}`).catch(() => {});
      await running;
      await other.end();
    }
  });

  it('hanactl test and add warn when the login can read mysql.* or set globals, and not for a least-privilege user', async () => {
    const tested = await home.ok(['test', 'maria']);
    expect(tested.stderr).toMatch(/warning: "maria" logs in with SELECT on every database, mysql\.\* .*least-privilege/);
    expect(tested.stderr).toMatch(/warning: "maria" logs in with SUPER or SYSTEM_VARIABLES_ADMIN: a stored function .* \(SET GLOBAL\)/);
    await admin.query(`CREATE USER '${USER}_a'@'%'`);
    await admin.query(`GRANT SELECT ON test.* TO '${USER}_a'@'%'`);
    const url = new URL(MYSQL_URL);
    url.username = `${USER}_a`;
    const added = await home.ok(['add', '--no-password', 'agent', url.toString()]);
    expect(added.stdout).toMatch(/The connection test passed/);
    expect(added.stderr).not.toMatch(/warning/);
    await admin.query(`GRANT SELECT ON mysql.* TO '${USER}_a'@'%'`);
    const granted = await home.ok(['test', 'agent']);
    expect(granted.stderr).toMatch(/warning: "agent" logs in with SELECT on the mysql database/);
    expect(granted.stderr).not.toMatch(/SUPER/);
    await admin.query(`GRANT SUPER ON *.* TO '${USER}_a'@'%'`);
    const superUser = await home.ok(['test', 'agent']);
    expect(superUser.stderr).toMatch(/warning: "agent" logs in with SUPER or SYSTEM_VARIABLES_ADMIN/);
  });

  it('masks the hash inside a JSON privilege document that a query still reaches', async () => {
    const result = await shim.call('run_query', {
      sql: `SELECT JSON_OBJECT('plugin', 'mysql_native_password', 'authentication_string', '${hash}') AS priv,
                   JSON_OBJECT('authentication_string', 'ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY') AS ed`,
    });
    expect(result.isError).toBeFalsy();
    noSecret(result);
    expect(JSON.stringify(result)).not.toContain('ZIgUREUg5PVgQ6Lskh');
  });
  it("refuses report_password (a replica's password, shown in clear) by name and among every variable, and reads other variables by name", async () => {
    for (const sql of [
      'SELECT @@global.report_password',
      "SHOW GLOBAL VARIABLES LIKE 'report%'",
      'SHOW VARIABLES',
      'SELECT * FROM information_schema.GLOBAL_VARIABLES',
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, sql).toBe(true);
      expect(textOf(result), sql).toMatch(/^STATEMENT_REFUSED: Refused: .*report_password/);
    }
    for (const sql of [
      'SELECT @@max_connections AS n',
      "SHOW VARIABLES LIKE 'max_connections'",
      "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'max_connections'",
    ]) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
  });
});
