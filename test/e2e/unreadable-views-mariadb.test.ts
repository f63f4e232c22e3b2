/**
 * Views whose definition the login may not read, on MariaDB, through the real shim, daemon and
 * server. information_schema.VIEWS shows a view's definition only to its definer or to a login
 * holding SELECT and SHOW VIEW on it; without it, what the view runs (the functions it calls, the
 * views it reads, with its owner's rights when it is SQL SECURITY DEFINER) cannot be judged. So on
 * read-only calls and on calls carrying context values such a view is refused, wherever the
 * statement reaches it, naming the view and the grant; a write without context values is unchanged.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { mariadbAccount } from '../helpers/mariadb-account.js';
import { type SleepingSession, sleepingSession } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = `huv_${s}`.slice(0, 32);
const password = randomBytes(12).toString('hex');

describe.skipIf(!available)('a view whose definition the login may not read is refused where calls are judged', () => {
  const home = new TestHome();
  const u = new URL(MYSQL_URL);
  const db = u.pathname.slice(1);
  let root: mysql.Connection;
  let ro: ShimHandle;
  let ctx: ShimHandle;
  let wr: ShimHandle;
  let wrctx: ShimHandle;

  /** SELECT only: the login may select from these views but not read them. */
  const unreadable = [`hv_${s}`, `inner_${s}`, `iv_${s}`, `hp_${s}`];
  /** SELECT and SHOW VIEW: the login reads their definitions. */
  const readable = [`rv_${s}`, `outer_${s}`, `mine_${s}`];

  beforeAll(async () => {
    root = await mysql.createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      database: db,
    });
    for (const host of ['%', 'localhost']) await root.query(`CREATE USER '${login}'@'${host}' IDENTIFIED BY '${password}'`);
    const account = await mariadbAccount(u, login, password);
    // The thread whose query the function kills: one of the login's own, so the login's rights reach it too.
    await root.query(`CREATE TABLE vic_${s} (id BIGINT)`);
    // Owned by the login so that it may read the body once a view calling it is readable.
    await root.query(
      `CREATE DEFINER = ${account} FUNCTION kill_${s}() RETURNS INT SQL SECURITY INVOKER READS SQL DATA BEGIN DECLARE i BIGINT; SELECT id INTO i FROM ${db}.vic_${s} LIMIT 1; KILL QUERY i; RETURN 1; END`,
    );
    await root.query(`CREATE SQL SECURITY DEFINER VIEW hv_${s} AS SELECT kill_${s}() AS k`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW rv_${s} AS SELECT kill_${s}() AS k`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW inner_${s} AS SELECT kill_${s}() AS k`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW outer_${s} AS SELECT k FROM inner_${s}`);
    await root.query(`CREATE SQL SECURITY INVOKER VIEW iv_${s} AS SELECT kill_${s}() AS k`);
    await root.query(`CREATE SQL SECURITY DEFINER VIEW hp_${s} AS SELECT 1 AS one`);
    // A routine whose body reads an unreadable view.
    await root.query(
      `CREATE DEFINER = ${account} FUNCTION via_${s}() RETURNS INT SQL SECURITY INVOKER READS SQL DATA RETURN (SELECT k FROM ${db}.hv_${s})`,
    );
    // The context recipe (docs/context-parameters.md): the function is the login's own, the view readable.
    await root.query(`CREATE TABLE o_${s} (customer_id INT, item VARCHAR(20))`);
    await root.query(`INSERT INTO o_${s} VALUES (1, 'a'), (1, 'b'), (2, 'c')`);
    await root.query(
      `CREATE DEFINER = ${account} FUNCTION cust_${s}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW mine_${s} AS SELECT customer_id, item FROM o_${s} WHERE customer_id = cust_${s}() LIMIT 18446744073709551615`,
    );
    await root.query(`CREATE TABLE w_${s} (one INT)`);
    for (const host of ['%', 'localhost']) {
      const to = `TO '${login}'@'${host}'`;
      for (const view of unreadable) await root.query(`GRANT SELECT ON ${db}.${view} ${to}`);
      for (const view of readable) await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.${view} ${to}`);
      // What the INVOKER view and function need to run with the login's own rights.
      await root.query(`GRANT EXECUTE ON FUNCTION ${db}.kill_${s} ${to}`);
      await root.query(`GRANT EXECUTE ON FUNCTION ${db}.via_${s} ${to}`);
      await root.query(`GRANT SELECT ON ${db}.vic_${s} ${to}`);
      await root.query(`GRANT SELECT, INSERT ON ${db}.w_${s} ${to}`);
    }
    const add = (name: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, `mariadb://${login}@${u.host}/${db}`, '--password-stdin', ...more], { input: password });
    await add('ro');
    await add('ctx', '--context', 'CUSTOMER_ID');
    await add('wr', '--allow-write');
    await add('wrctx', '--allow-write', '--context', 'CUSTOMER_ID');
    ro = await startShim(home.env, ['--connection', 'ro']);
    ctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'ctx']);
    wr = await startShim(home.env, ['--connection', 'wr']);
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    for (const shim of [ro, ctx, wr, wrctx]) await shim?.close();
    await home.dispose();
    for (const sql of [
      ...[...unreadable, ...readable].map((view) => `DROP VIEW IF EXISTS ${view}`),
      ...[`kill_${s}`, `via_${s}`, `cust_${s}`].map((name) => `DROP FUNCTION IF EXISTS ${name}`),
      ...[`vic_${s}`, `o_${s}`, `w_${s}`].map((table) => `DROP TABLE IF EXISTS ${table}`),
      `DROP USER IF EXISTS '${login}'@'%'`,
      `DROP USER IF EXISTS '${login}'@'localhost'`,
    ])
      await root?.query(sql).catch(() => {});
    await root?.end();
  });

  /** A query of the login's own, running on the server before this returns; its id is the one the function kills. */
  async function victim(): Promise<SleepingSession> {
    const conn = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: login, password, database: db });
    await root.query(`DELETE FROM vic_${s}`);
    await root.query(`INSERT INTO vic_${s} VALUES (?)`, [conn.threadId]);
    return sleepingSession(root, conn);
  }

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
  };
  /** The refusal of an unreadable view: it names the view and the grant that lets hanactl read it. */
  const hiddenView = (view: string) => [
    new RegExp(`view ${db}\\.${view}`),
    /may not read/,
    new RegExp(`GRANT SHOW VIEW ON ${db}\\.${view} TO`),
    /stored-routine/,
  ];

  it('refuses a DEFINER view the login may not read, on read-only and context calls, before anything runs', async () => {
    const other = await victim();
    try {
      for (const shim of [ro, ctx, wrctx]) {
        refused(await shim.call('run_query', { sql: `SELECT k FROM hv_${s}` }), ...hiddenView(`hv_${s}`), /SQL SECURITY DEFINER/);
        refused(await shim.call('sample_rows', { table: `hv_${s}` }), ...hiddenView(`hv_${s}`));
      }
      refused(await ro.call('explain_query', { sql: `SELECT k FROM hv_${s}` }), ...hiddenView(`hv_${s}`));
      refused(
        await ro.call('run_query', { sql: `SELECT * FROM w_${s} WHERE one IN (SELECT k FROM ${db}.hv_${s})` }),
        ...hiddenView(`hv_${s}`),
      );
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('refuses an unreadable view nested in a readable one, an unreadable INVOKER view, and one a routine body reads', async () => {
    const other = await victim();
    try {
      for (const shim of [ro, ctx]) {
        refused(
          await shim.call('run_query', { sql: `SELECT k FROM outer_${s}` }),
          ...hiddenView(`inner_${s}`),
          new RegExp(`reached through the view ${db}\\.outer_${s}`),
        );
        refused(await shim.call('run_query', { sql: `SELECT k FROM iv_${s}` }), ...hiddenView(`iv_${s}`), /SQL SECURITY INVOKER/);
        refused(
          await shim.call('run_query', { sql: `SELECT via_${s}() AS k` }),
          ...hiddenView(`hv_${s}`),
          new RegExp(`reached through ${db}\\.via_${s}\\(\\)`),
        );
      }
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it('judges a view the login may read: the function it calls is refused by what its body does', async () => {
    const other = await victim();
    try {
      for (const shim of [ro, ctx])
        refused(await shim.call('run_query', { sql: `SELECT k FROM rv_${s}` }), new RegExp(`kill_${s}`), /KILL/);
      expect(await other.running()).toBe(true);
    } finally {
      await other.end();
    }
  });

  it("answers the context recipe's view, and refuses an unreadable view that calls nothing", async () => {
    const mine = await ctx.call('run_query', { sql: `SELECT item FROM mine_${s} ORDER BY item` });
    expect(mine.isError, textOf(mine)).toBeFalsy();
    expect((mine.structuredContent as { rows: { item: string }[] }).rows.map((r) => r.item)).toEqual(['a', 'b']);
    const sample = await ctx.call('sample_rows', { table: `mine_${s}` });
    expect(sample.isError, textOf(sample)).toBeFalsy();
    refused(await ro.call('run_query', { sql: `SELECT one FROM hp_${s}` }), ...hiddenView(`hp_${s}`));
  });

  it('leaves a write without context values unchanged: it runs, unjudged', async () => {
    const wrote = await wr.call('run_query', { sql: `INSERT INTO w_${s} SELECT one FROM hp_${s}` });
    expect(wrote.isError, textOf(wrote)).toBeFalsy();
    const [rows] = (await root.query(`SELECT one FROM w_${s}`)) as unknown as [{ one: number }[]];
    expect(rows).toEqual([{ one: 1 }]);
    // With context values the same write is judged, and refused.
    refused(await wrctx.call('run_query', { sql: `INSERT INTO w_${s} SELECT one FROM hp_${s}` }), ...hiddenView(`hp_${s}`));
    // A read on a writable connection is a read: judged.
    refused(await wr.call('run_query', { sql: `SELECT one FROM hp_${s}` }), ...hiddenView(`hp_${s}`));
  });

  it('hanactl test warns about the views the login may select but not read, with the grant', async () => {
    const tested = await home.ok(['test', 'ro']);
    expect(tested.stderr).toMatch(new RegExp(`"ro" may select from ${unreadable.length} views whose definition it may not read`));
    expect(tested.stderr).toMatch(/GRANT SHOW VIEW ON /);
    for (const view of unreadable) expect(tested.stderr).toContain(`${db}.${view}`);
    for (const view of readable) expect(tested.stderr).not.toContain(`${db}.${view}`);
  });
});
