/**
 * Stored functions named as MariaDB's native ones, through the real shim, daemon and server, in a
 * database of their own: MariaDB 10.11 runs the stored `trunc(1)` and `mbrcoveredby(2)`, not a
 * native function, so each is judged like any stored function, called in the statement or inside
 * another routine's body.
 */
import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { mariadbAccount } from '../helpers/mariadb-account.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const db = `hnn_${s}`;
const reader = `hnr_${s}`.slice(0, 32);
const owner = `hno_${s}`.slice(0, 32);
const password = randomBytes(12).toString('hex');
const lock = `hnn_lock_${s}`;
const MARKER = 777;

describe.skipIf(!available)('a stored function named as a native one is judged on MariaDB', () => {
  const home = new TestHome();
  const u = new URL(MYSQL_URL);
  let root: mysql.Connection;
  let rd: ShimHandle;
  let rdctx: ShimHandle;
  let own: ShimHandle;

  const functions: Record<string, string> = {
    // What the report's SET GLOBAL did, as a harmless marker the judgement refuses the same way.
    trunc: `(x INT) RETURNS INT SQL SECURITY DEFINER BEGIN DO GET_LOCK('${lock}', 0); RETURN ${MARKER}; END`,
    fmt_amount: '(x INT) RETURNS INT SQL SECURITY INVOKER RETURN trunc(x)',
    // A DEFINER function reading past the context recipe's view.
    mbrcoveredby:
      '(c INT) RETURNS VARCHAR(200) SQL SECURITY DEFINER READS SQL DATA RETURN (SELECT GROUP_CONCAT(item) FROM orders WHERE customer_id = c)',
  };

  beforeAll(async () => {
    root = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
    await root.query(`CREATE DATABASE ${db}`);
    await root.query(`USE ${db}`);
    await root.query('CREATE TABLE orders (customer_id INT, item VARCHAR(20))');
    await root.query("INSERT INTO orders VALUES (1, 'mine'), (2, 'secret_of_2')");
    for (const [name, rest] of Object.entries(functions)) await root.query(`CREATE FUNCTION ${name}${rest}`);
    for (const host of ['%', 'localhost']) await root.query(`CREATE USER '${reader}'@'${host}' IDENTIFIED BY '${password}'`);
    // The context recipe (docs/context-parameters.md): the reader's own function, and a view it may read.
    await root.query(
      `CREATE DEFINER = ${await mariadbAccount(u, reader, password)} FUNCTION cust() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      'CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW mine AS SELECT customer_id, item FROM orders WHERE customer_id = cust() LIMIT 18446744073709551615',
    );
    for (const host of ['%', 'localhost']) {
      await root.query(`GRANT SELECT ON mysql.proc TO '${reader}'@'${host}'`);
      await root.query(`GRANT EXECUTE ON ${db}.* TO '${reader}'@'${host}'`);
      await root.query(`GRANT SELECT, SHOW VIEW ON ${db}.mine TO '${reader}'@'${host}'`);
    }
    // A login that owns its DEFINER function (so reads its body) but sees no other routine of the schema.
    await root.query(`CREATE USER '${owner}'@'%' IDENTIFIED BY '${password}'`);
    await root.query(`CREATE DEFINER='${owner}'@'%' FUNCTION own_trunc() RETURNS INT SQL SECURITY DEFINER RETURN trunc(1)`);
    await root.query(`GRANT EXECUTE ON FUNCTION ${db}.own_trunc TO '${owner}'@'%'`);
    const add = (name: string, login: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, `mariadb://${login}@${u.host}/${db}`, '--password-stdin', ...more], { input: password });
    await add('rd', reader);
    await add('rdctx', reader, '--context', 'CUSTOMER_ID');
    await add('own', owner);
    rd = await startShim(home.env, ['--connection', 'rd']);
    rdctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'rdctx']);
    own = await startShim(home.env, ['--connection', 'own']);
  });

  afterAll(async () => {
    for (const shim of [rd, rdctx, own]) await shim?.close();
    await home.dispose();
    for (const sql of [
      `DROP DATABASE IF EXISTS ${db}`,
      `DROP USER IF EXISTS '${reader}'@'%'`,
      `DROP USER IF EXISTS '${reader}'@'localhost'`,
      `DROP USER IF EXISTS '${owner}'@'%'`,
    ])
      await root?.query(sql).catch(() => {});
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    for (const part of parts) expect(textOf(result)).toMatch(part);
    expect(textOf(result)).not.toContain(String(MARKER));
  };

  it('the server runs the stored functions, not native ones', async () => {
    const [rows] = (await root.query('SELECT trunc(1) AS t, mbrcoveredby(2) AS m')) as unknown as [{ t: number; m: string }[]];
    expect(rows[0]).toEqual({ t: MARKER, m: 'secret_of_2' });
    await root.query(`DO RELEASE_LOCK('${lock}')`);
  });

  it('refuses trunc(1) on a read-only call, written as the native function is, and through an INVOKER function', async () => {
    for (const sql of ['SELECT trunc(1) AS t', 'SELECT TRUNC(1) AS t', 'SELECT trunc (1) AS t', 'SELECT `trunc`(1) AS t'])
      refused(await rd.call('run_query', { sql }), /trunc\(\)/, /get_lock/i, /stored-routine/);
    refused(await rd.call('run_query', { sql: 'SELECT fmt_amount(3) AS f' }), /fmt_amount\(\)/, /trunc\(\)/, /get_lock/i);
  });

  it("refuses mbrcoveredby(2) where rows are separated: a DEFINER function reading another customer's rows", async () => {
    refused(await rdctx.call('run_query', { sql: 'SELECT mbrcoveredby(2) AS m' }), /mbrcoveredby\(\)/, /reads tables/);
    const mine = await rdctx.call('run_query', { sql: 'SELECT item FROM mine' });
    expect(textOf(mine)).toContain('mine');
    expect(textOf(mine)).not.toContain('secret_of_2');
  });

  it("refuses a native function's name a DEFINER body calls where the login cannot see every routine of the schema", async () => {
    refused(await own.call('run_query', { sql: 'SELECT own_trunc() AS t' }), /trunc\(\)/, /may not see/);
  });
});
