/**
 * Procedures a sql_mode ORACLE body calls without CALL, on MariaDB, through the real shim, daemon
 * and server. In such a body a statement that is only a procedure's name (`p;`, `db.p;`, `p();`,
 * after a label, inside IF or a block) calls it, so the walk follows it and judges the procedure
 * as it judges one after CALL. On a read-only connection such a body is refused as a whole (its
 * leading AS starts no read), and on a writable connection carrying context values too: the server
 * parses it by the ORACLE grammar, whose statement starts the check does not read whole, so the
 * function (or procedure) is refused before what it calls runs, and nothing of another customer's
 * is read.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin, type SleepingSession, sleepingSession } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`hoc_${s}`);
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('a procedure a sql_mode ORACLE body calls by its name alone is judged', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let ro: ShimHandle;
  let wrctx: ShimHandle;

  /** sql_mode ORACLE procedures, SQL SECURITY DEFINER (the server's own user owns them). */
  const procedures: Record<string, string> = {
    // Every customer's items, read with the owner's rights.
    [`pall_${s}`]: `AS BEGIN SELECT GROUP_CONCAT(item ORDER BY item) INTO @oc_all FROM ${db}.oc_${s}; END`,
    // Customer 2's items through the separating view, with the context value toggled and put back.
    [`pforge_${s}`]: `AS keep VARCHAR(64); BEGIN keep := @mcp_customer_id; SET @mcp_customer_id = '2'; SELECT GROUP_CONCAT(item ORDER BY item) INTO @oc_forged FROM ${db}.mine_${s}; SET @mcp_customer_id = keep; END`,
    // The same, with the caller's rights: it reads no table but through the view.
    [`pforgei_${s}`]: `SQL SECURITY INVOKER AS keep VARCHAR(64); BEGIN keep := @mcp_customer_id; SET @mcp_customer_id = '2'; SELECT GROUP_CONCAT(item ORDER BY item) INTO @oc_stolen FROM ${db}.mine_${s}; SET @mcp_customer_id = keep; END`,
    [`pkill_${s}`]: `AS i BIGINT; BEGIN SELECT id INTO i FROM ${db}.vic_${s} LIMIT 1; KILL QUERY i; END`,
    [`pnoop_${s}`]: 'AS BEGIN NULL; END',
    [`pdyn_${s}`]: `AS BEGIN EXECUTE IMMEDIATE 'SELECT GROUP_CONCAT(item ORDER BY item) INTO @oc_dyn FROM ${db}.oc_${s}'; END`,
  };
  /** sql_mode ORACLE functions, SQL SECURITY INVOKER, each calling one of them without CALL. */
  const functions: Record<string, string> = {
    [`fbare_${s}`]: `AS BEGIN pall_${s}; RETURN @oc_all; END`,
    [`fqual_${s}`]: `AS BEGIN ${db}.pall_${s}; RETURN @oc_all; END`,
    [`fparen_${s}`]: `AS BEGIN pall_${s}(); RETURN @oc_all; END`,
    [`fblock_${s}`]: `AS BEGIN IF 1 = 1 THEN BEGIN <<l>> pall_${s}; END; END IF; RETURN @oc_all; END`,
    [`fforge_${s}`]: `AS BEGIN pforge_${s}; RETURN @oc_forged; END`,
    [`fforgei_${s}`]: `AS BEGIN pforgei_${s}; RETURN @oc_stolen; END`,
    [`fkill_${s}`]: `AS BEGIN pkill_${s}; RETURN 'killed'; END`,
    [`fnoop_${s}`]: `AS BEGIN pnoop_${s}; RETURN 'done'; END`,
  };

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE oc_${s} (customer_id INT NOT NULL, item VARCHAR(20) NOT NULL)`);
    await root.query(`INSERT INTO oc_${s} VALUES (1, 'a1'), (1, 'b1'), (2, 'c2'), (3, 'd3')`);
    await root.query(`CREATE TABLE vic_${s} (id BIGINT)`);
    await login.create(root);
    // The context recipe (docs/context-parameters.md): the login's own function, a DEFINER view filtering by it.
    await root.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION cust_${s}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW mine_${s} AS SELECT customer_id, item FROM oc_${s} WHERE customer_id = cust_${s}() LIMIT 18446744073709551615`,
    );
    await root.query("SET SESSION sql_mode = 'ORACLE'");
    try {
      for (const [name, body] of Object.entries(procedures)) await root.query(`CREATE PROCEDURE ${name} ${body}`);
      for (const [name, body] of Object.entries(functions))
        await root.query(`CREATE FUNCTION ${name} RETURN VARCHAR(200) SQL SECURITY INVOKER ${body}`);
    } finally {
      await root.query('SET SESSION sql_mode = DEFAULT');
    }
    // The login reads every routine body (MariaDB before 11.3), so that hanactl judges each one.
    await login.grant(root, [
      'SELECT ON mysql.proc',
      `SELECT, SHOW VIEW ON ${db}.mine_${s}`,
      ...Object.keys(procedures).map((name) => `EXECUTE ON PROCEDURE ${db}.${name}`),
      ...Object.keys(functions).map((name) => `EXECUTE ON FUNCTION ${db}.${name}`),
    ]);
    const add = (name: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, login.url({ withPassword: false }), '--password-stdin', ...more], { input: login.password });
    await add('ro');
    await add('wrctx', '--allow-write', '--context', 'CUSTOMER_ID');
    ro = await startShim(home.env, ['--connection', 'ro']);
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    for (const shim of [ro, wrctx]) await shim?.close();
    await home.dispose();
    for (const sql of [
      ...Object.keys(functions).map((name) => `DROP FUNCTION IF EXISTS ${name}`),
      ...Object.keys(procedures).map((name) => `DROP PROCEDURE IF EXISTS ${name}`),
      `DROP VIEW IF EXISTS mine_${s}`,
      `DROP FUNCTION IF EXISTS cust_${s}`,
      `DROP TABLE IF EXISTS oc_${s}`,
      `DROP TABLE IF EXISTS vic_${s}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/stored-routine|session-change/);
    for (const part of parts) expect(textOf(result), textOf(result)).toMatch(part);
  };

  it("refuses a function whose body reads every customer's rows through a procedure it names alone, in every form", async () => {
    for (const fn of ['fbare', 'fqual', 'fparen', 'fblock']) {
      const result = await wrctx.call('run_query', { sql: `SELECT ${fn}_${s}() AS v FROM DUAL FOR UPDATE` });
      refused(result, new RegExp(`runs ${db}\\.${fn}_${s}\\(\\), whose body was stored under sql_mode=ORACLE`));
      expect(textOf(result), fn).not.toMatch(/c2|d3/);
    }
  });

  it('refuses a function whose procedure toggles @mcp_customer_id and puts it back', async () => {
    for (const name of ['forge', 'forgei']) {
      const result = await wrctx.call('run_query', { sql: `SELECT f${name}_${s}() AS v FROM DUAL FOR UPDATE` });
      refused(result, new RegExp(`f${name}_${s}\\(\\), whose body was stored under sql_mode=ORACLE`));
      expect(textOf(result)).not.toMatch(/c2/);
    }
  });

  it('refuses, on a read-only connection, a function whose procedure KILLs, before anything runs', async () => {
    let other: SleepingSession | undefined;
    try {
      const u = new URL(MYSQL_URL);
      const conn = await mysql.createConnection({
        host: u.hostname,
        port: Number(u.port || 3306),
        user: login.user,
        password: login.password,
        database: db,
      });
      await root.query(`DELETE FROM vic_${s}`);
      await root.query(`INSERT INTO vic_${s} VALUES (?)`, [conn.threadId]);
      other = await sleepingSession(root, conn);
      // A sql_mode ORACLE body is refused on a read-only call as a whole (its leading AS starts no
      // read); the procedure it calls is refused there too, were the body read otherwise.
      refused(await ro.call('run_query', { sql: `SELECT fkill_${s}() AS v` }), new RegExp(`fkill_${s}`));
      expect(await other.running()).toBe(true);
    } finally {
      await other?.end();
    }
  });

  it('refuses, where rows are separated, a sql_mode ORACLE function even when what it calls does nothing', async () => {
    refused(
      await wrctx.call('run_query', { sql: `SELECT fnoop_${s}() AS v FROM DUAL FOR UPDATE` }),
      new RegExp(`fnoop_${s}\\(\\), whose body was stored under sql_mode=ORACLE`),
    );
  });

  it('refuses, where rows are separated, a procedure that runs SQL text it builds', async () => {
    refused(
      await wrctx.call('run_query', { sql: `CALL pdyn_${s}()` }),
      new RegExp(`pdyn_${s}\\(\\), whose body was stored under sql_mode=ORACLE`),
    );
  });
});
