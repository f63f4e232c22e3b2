/**
 * Names as MariaDB reads them, through the real shim, daemon and server: `.v` and `. v` are the
 * current database's v (sql_yacc.yy table_ident `'.' ident`), a quoted `dual` is a name (only the
 * unquoted DUAL reads no table), and `INSERT INTO v (a)` names v. A view reached any of these ways
 * is judged as by its plain name, on read-only, context and writable context calls, and a system
 * table of the connection's own database is refused after a lone dot too.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const db = `fix_mydot_${s}`;
const login = `hmd_${s}`.slice(0, 32);
const password = randomBytes(12).toString('hex');

describe.skipIf(!available)('views and system tables named with a lone dot, a quoted dual or a column list are judged', () => {
  const home = new TestHome();
  const u = new URL(MYSQL_URL);
  let root: mysql.Connection;
  let retries = '';
  let ro: ShimHandle;
  let ctx: ShimHandle;
  let wrctx: ShimHandle;
  let inSchema: ShimHandle;

  beforeAll(async () => {
    root = await openMariadbAdmin({ database: false });
    const [[row]] = (await root.query('SELECT @@global.net_retry_count AS v')) as unknown as [{ v: string }[]];
    retries = String(row?.v);
    await root.query(`CREATE DATABASE ${db}`);
    await root.query(`USE ${db}`);
    await root.query('CREATE TABLE w (customer_id INT, v INT)');
    // A server-wide setting changed with the owner's rights: what a read-only call must not run.
    await root.query(
      'CREATE FUNCTION bump() RETURNS INT SQL SECURITY DEFINER BEGIN SET GLOBAL net_retry_count = @@global.net_retry_count + 1; RETURN 1; END',
    );
    await root.query('CREATE SQL SECURITY DEFINER VIEW bump_v AS SELECT bump() AS b');
    await root.query('CREATE SQL SECURITY DEFINER VIEW hidden_v AS SELECT bump() AS b');
    await root.query('CREATE SQL SECURITY DEFINER VIEW `dual` AS SELECT bump() AS b');
    await root.query('CREATE SQL SECURITY DEFINER VIEW wv AS SELECT customer_id, v FROM w WHERE bump() > 0 WITH CHECK OPTION');
    for (const host of ['%', 'localhost']) {
      const to = `TO '${login}'@'${host}'`;
      await root.query(`CREATE USER '${login}'@'${host}' IDENTIFIED BY '${password}'`);
      // The login reads the readable views' definitions and the function's body.
      await root.query(`GRANT SELECT ON mysql.proc ${to}`);
      for (const view of ['bump_v', '`dual`']) await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.${view} ${to}`);
      // No SHOW VIEW: definitions the login may not read.
      await root.query(`GRANT SELECT ON ${db}.hidden_v ${to}`);
      await root.query(`GRANT SELECT, INSERT ON ${db}.wv ${to}`);
    }
    const add = (name: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, `mariadb://${login}@${u.host}/${db}`, '--password-stdin', ...more], { input: password });
    await add('ro');
    await add('ctx', '--context', 'CUSTOMER_ID');
    await add('wrctx', '--allow-write', '--context', 'CUSTOMER_ID');
    const schemaUrl = new URL(MYSQL_URL);
    schemaUrl.pathname = '/information_schema';
    await home.ok(['add', '--no-test', '--no-password', 'insys', schemaUrl.toString()]);
    ro = await startShim(home.env, ['--connection', 'ro']);
    ctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'ctx']);
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'wrctx']);
    inSchema = await startShim(home.env, ['--connection', 'insys']);
  });

  afterAll(async () => {
    for (const shim of [ro, ctx, wrctx, inSchema]) await shim?.close();
    await home.dispose();
    if (retries !== '') await root?.query(`SET GLOBAL net_retry_count = ${Number(retries)}`).catch(() => {});
    for (const sql of [`DROP DATABASE IF EXISTS ${db}`, `DROP USER IF EXISTS '${login}'@'%'`, `DROP USER IF EXISTS '${login}'@'localhost'`])
      await root?.query(sql).catch(() => {});
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
  };
  const unchanged = async () => {
    const [[row]] = (await root.query('SELECT @@global.net_retry_count AS v')) as unknown as [{ v: string }[]];
    expect(String(row?.v)).toBe(retries);
  };

  it('refuses a view read after a lone dot on a read-only call, in run_query and explain_query', async () => {
    for (const sql of [
      'SELECT * FROM .bump_v',
      'SELECT * FROM . bump_v',
      'SELECT * FROM /* c */ . /* d */ bump_v',
      'SELECT y.b FROM (SELECT 1 AS a) x JOIN .bump_v y ON 1',
      'SELECT y.b FROM (SELECT 1 AS a) x JOIN.`bump_v` y ON 1',
      'SELECT * FROM (.bump_v)',
    ]) {
      refused(await ro.call('run_query', { sql }), /bump_v/, /SET GLOBAL/, /stored-routine/);
      // EXPLAIN materialises the view, which runs its function.
      refused(await ro.call('explain_query', { sql }), /bump_v/, /SET GLOBAL/);
    }
    await unchanged();
  });

  it('refuses a view whose definition the login may not read after a lone dot on a context call', async () => {
    for (const sql of ['SELECT y.b FROM (SELECT 1 AS a) x JOIN .hidden_v y ON 1', 'SELECT * FROM . hidden_v'])
      refused(await ctx.call('run_query', { sql }), new RegExp(`view ${db}\\.hidden_v`), /may not read/, /GRANT SHOW VIEW/);
    refused(await ctx.call('run_query', { sql: 'SELECT * FROM .bump_v' }), /bump_v/, /SET GLOBAL/);
    await unchanged();
  });

  it('judges a view named dual when the name is quoted, and still reads no table for the unquoted DUAL', async () => {
    for (const shim of [ro, ctx])
      for (const sql of ['SELECT * FROM `dual`', 'SELECT * FROM .dual', `SELECT * FROM ${db}.dual`])
        refused(await shim.call('run_query', { sql }), /dual/, /SET GLOBAL/, /stored-routine/);
    const plain = await ro.call('run_query', { sql: 'SELECT 1 AS one FROM DUAL' });
    expect(plain.isError, textOf(plain)).toBeFalsy();
    await unchanged();
  });

  it('judges a view written to through a column list on a writable context call', async () => {
    for (const sql of [
      'INSERT INTO wv (customer_id, v) VALUES (1, 6)',
      'INSERT INTO wv(customer_id, v) VALUES (1, 6)',
      'INSERT wv (customer_id, v) VALUES (1, 6)',
      'INSERT INTO .wv (customer_id, v) VALUES (1, 6)',
      'REPLACE INTO wv (customer_id, v) VALUES (1, 6)',
    ])
      // Refused as a view the write may go through (the server calls it neither updatable nor not), or as one the login may not read.
      refused(await wrctx.call('run_query', { sql }), new RegExp(`view ${db}\\.wv`), /may not read|may write through the updatable view/);
    const [[row]] = (await root.query('SELECT COUNT(*) AS n FROM w')) as unknown as [{ n: number }[]];
    expect(Number(row?.n)).toBe(0);
    await unchanged();
  });

  it('refuses a system table of the connection’s own schema after a lone dot', async () => {
    for (const sql of [
      'SELECT q.* FROM (SELECT 1 AS a) x JOIN .INNODB_CMP_RESET q',
      'SELECT * FROM . INNODB_CMP_RESET',
      'SELECT * FROM TABLES t JOIN.`INNODB_CMP_RESET` q ON 1',
    ])
      for (const tool of ['run_query', 'explain_query']) refused(await inSchema.call(tool, { sql }), /INNODB_CMP_RESET/, /system-table/);
  });
});
