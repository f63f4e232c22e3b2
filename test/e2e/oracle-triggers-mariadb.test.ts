/**
 * Triggers stored under sql_mode ORACLE or MSSQL on a writable MariaDB connection carrying context
 * values, through the real shim, daemon and server. The login creates them itself with the mariadb
 * client, as a person would outside hanactl. Under ORACLE the server parses the body by another
 * grammar (ELSIF ... THEN, `<<label>>`, FOR/WHILE ... LOOP, EXCEPTION WHEN ... THEN start
 * statements), so a `SET @mcp_customer_id` there could switch the customer between the rows of one
 * insert: such a trigger is refused whole, and no other customer's row is written. The recipe's
 * function and a default-mode trigger that only reads the context value still run.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`ora_${s}`);
const db = MYSQL_TEST_DB;
const server = new URL(MYSQL_URL);

/** Runs `sql` with the mariadb client as the login under `sqlMode`, the password in the environment. */
function asLogin(sqlMode: string, sql: string): void {
  const run = spawnSync(
    'mariadb',
    [
      '-h',
      server.hostname,
      '-P',
      server.port || '3306',
      '-u',
      login.user,
      db,
      '-e',
      `SET sql_mode = '${sqlMode}';\nDELIMITER //\n${sql}//`,
    ],
    { env: { ...process.env, MYSQL_PWD: login.password }, encoding: 'utf8', timeout: 30_000 },
  );
  if (run.status !== 0) throw new Error(`mariadb client: ${run.stderr}`);
}

describe.skipIf(!available)('a trigger stored under sql_mode ORACLE or MSSQL, where rows are separated', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let wrctx: ShimHandle;
  const orders = `ora_orders_${s}`;
  const mine = `ora_mine_${s}`;
  const cust = `ora_cust_${s}`;
  const leak = `ora_leak_${s}`;
  const quiet = `ora_quiet_${s}`;
  const ms = `ora_ms_${s}`;
  const reads = `ora_reads_${s}`;
  const tables = [leak, quiet, ms, reads];
  const read = `(SELECT group_concat(secret) FROM ${db}.${mine})`;

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE ${orders} (id INT PRIMARY KEY, customer_id VARCHAR(8) NOT NULL, secret VARCHAR(40) NOT NULL)`);
    await root.query(`INSERT INTO ${orders} VALUES (1, 'C1', 'c1-apple'), (2, 'C2', 'SECRET-c2-banana')`);
    for (const t of tables) await root.query(`CREATE TABLE ${t} (id INT AUTO_INCREMENT PRIMARY KEY, a INT, b VARCHAR(200), c VARCHAR(8))`);
    await login.create(root);
    await root.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION ${cust}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW ${mine} AS SELECT id, secret FROM ${orders} WHERE customer_id = ${cust}() LIMIT 18446744073709551615`,
    );
    await login.grant(root, [
      'SELECT ON mysql.proc',
      `SELECT, SHOW VIEW ON ${db}.${mine}`,
      ...tables.map((t) => `SELECT, INSERT, UPDATE, DELETE, TRIGGER ON ${db}.${t}`),
    ]);
    // The reviewer's trigger, as the login, under sql_mode ORACLE.
    asLogin(
      'ORACLE',
      `CREATE TRIGGER ora_tl_${s} BEFORE INSERT ON ${leak} FOR EACH ROW BEGIN
  IF NEW.a = 0 THEN NULL; ELSIF NEW.a = 1 THEN SET @mcp_customer_id = 'C2'; END IF;
  IF NEW.a = 0 THEN NULL; ELSIF NEW.a = 3 THEN SET @mcp_customer_id = 'C1'; END IF; END`,
    );
    asLogin('ORACLE', `CREATE TRIGGER ora_tq_${s} BEFORE INSERT ON ${quiet} FOR EACH ROW BEGIN <<l>> NULL; END`);
    asLogin('MSSQL', `CREATE TRIGGER ora_tm_${s} BEFORE INSERT ON ${ms} FOR EACH ROW SET NEW.c = [NEW].a`);
    asLogin('', `CREATE TRIGGER ora_tr_${s} BEFORE INSERT ON ${reads} FOR EACH ROW SET NEW.c = @mcp_customer_id`);
    home.ok(
      ['add', '--no-test', 'wrctx', login.url({ withPassword: false }), '--password-stdin', '--allow-write', '--context', 'CUSTOMER_ID'],
      { input: login.password },
    );
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: 'C1' }, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    await wrctx?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS ${mine}`,
      ...[orders, ...tables].map((t) => `DROP TABLE IF EXISTS ${t}`),
      `DROP FUNCTION IF EXISTS ${cust}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const rows = async (table: string): Promise<string> => {
    const [found] = (await root.query(`SELECT a, b, c FROM ${table} ORDER BY id`)) as unknown as [unknown[]];
    return JSON.stringify(found);
  };

  it("refuses the insert whose ORACLE-mode trigger switches the customer between rows, and writes no other customer's data", async () => {
    const result = await wrctx.call('run_query', {
      sql: `insert into ${leak} (a, b) values (1, ${read}), (2, ${read}), (3, ${read})`,
    });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`trigger ${db}\\.ora_tl_${s} on ${db}\\.${leak}.*sql_mode=ORACLE`));
    expect(textOf(result)).toMatch(/stored-routine/);
    expect(await rows(leak)).toBe('[]');
    const [all] = (await root.query(`SELECT COUNT(*) AS n FROM ${leak} WHERE b LIKE '%SECRET%'`)) as unknown as [{ n: number }[]];
    expect(Number(all[0]?.n)).toBe(0);
  });

  it('refuses a trigger stored under ORACLE or MSSQL whatever its body does', async () => {
    const quietResult = await wrctx.call('run_query', { sql: `INSERT INTO ${quiet} (a) VALUES (1)` });
    expect(quietResult.isError, textOf(quietResult)).toBe(true);
    expect(textOf(quietResult)).toMatch(/sql_mode=ORACLE/);
    const msResult = await wrctx.call('run_query', { sql: `INSERT INTO ${ms} (a) VALUES (1)` });
    expect(msResult.isError, textOf(msResult)).toBe(true);
    expect(textOf(msResult)).toMatch(/sql_mode=MSSQL/);
    expect(await rows(quiet)).toBe('[]');
    expect(await rows(ms)).toBe('[]');
  });

  it("still runs the recipe's function and a default-mode trigger that only reads the context value", async () => {
    const selected = await wrctx.call('run_query', { sql: `SELECT group_concat(secret) AS s FROM ${mine}` });
    expect(selected.isError, textOf(selected)).toBeFalsy();
    expect(textOf(selected)).toMatch(/c1-apple/);
    expect(textOf(selected)).not.toMatch(/SECRET/);
    const inserted = await wrctx.call('run_query', { sql: `INSERT INTO ${reads} (a, b) VALUES (1, ${read})` });
    expect(inserted.isError, textOf(inserted)).toBeFalsy();
    expect(await rows(reads)).toBe('[{"a":1,"b":"c1-apple","c":"C1"}]');
  });
});
