/**
 * Stored functions with OUT or INOUT parameters (MariaDB 10.8 and later), through the real shim,
 * daemon and server, on read-only and writable connections carrying context values. Such a function
 * writes back into the variable its caller passes there: a function reading through the recipe's
 * view may pass @mcp_customer_id to one, set it to another customer, read that customer's rows and
 * set it back. Where the call carries context values, any function declaring such a parameter that
 * the statement reaches is refused, naming it, before anything runs; a function with only IN
 * parameters, and the recipe, still answer.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`hmo_${s}`);
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('a stored function with an OUT or INOUT parameter, where the call carries context values', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let ro: ShimHandle;
  let wrctx: ShimHandle;

  /** Each created with the login as DEFINER, so that it reads every body. */
  const functions: Record<string, string> = {
    [`setsel_${s}`]: '(OUT x VARCHAR(64), v VARCHAR(64)) RETURNS INT SQL SECURITY INVOKER BEGIN SELECT v INTO x; RETURN 1; END',
    [`peeks_${s}`]: `(me VARCHAR(64), other VARCHAR(64)) RETURNS TEXT SQL SECURITY INVOKER READS SQL DATA BEGIN DECLARE r INT; DECLARE res TEXT; SET r = setsel_${s}(@mcp_customer_id, other); SELECT GROUP_CONCAT(item ORDER BY item) INTO res FROM my_orders_${s}; SET r = setsel_${s}(@mcp_customer_id, me); RETURN res; END`,
    [`setio_${s}`]: '(INOUT x VARCHAR(64), v VARCHAR(64)) RETURNS INT SQL SECURITY INVOKER BEGIN SET x = v; RETURN 1; END',
    [`peekio_${s}`]: `(me VARCHAR(64), other VARCHAR(64)) RETURNS TEXT SQL SECURITY INVOKER READS SQL DATA BEGIN DECLARE r INT; DECLARE res TEXT; SET r = setio_${s}(@mcp_customer_id, other); SELECT GROUP_CONCAT(item ORDER BY item) INTO res FROM my_orders_${s}; SET r = setio_${s}(@mcp_customer_id, me); RETURN res; END`,
    [`echo_${s}`]: "(v VARCHAR(64)) RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN CONCAT('seen-', v)",
  };

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE mo_${s} (customer_id INT NOT NULL, item VARCHAR(20) NOT NULL)`);
    await root.query(`INSERT INTO mo_${s} VALUES (1, 'a1'), (1, 'b1'), (2, 'c2'), (2, 'd2')`);
    await login.create(root);
    const definer = await login.definer();
    // The context recipe (docs/context-parameters.md): the login's own function, a DEFINER view filtering by it.
    await root.query(
      `CREATE DEFINER = ${definer} FUNCTION cust_${s}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW my_orders_${s} AS SELECT customer_id, item FROM mo_${s} WHERE customer_id = cust_${s}() LIMIT 18446744073709551615`,
    );
    for (const [name, rest] of Object.entries(functions)) await root.query(`CREATE DEFINER = ${definer} FUNCTION ${name}${rest}`);
    await login.grant(root, [
      `SELECT, SHOW VIEW ON ${db}.my_orders_${s}`,
      ...Object.keys(functions).map((name) => `EXECUTE ON FUNCTION ${db}.${name}`),
    ]);
    const add = (name: string, ...more: string[]) =>
      home.ok(['add', '--no-test', name, login.url({ withPassword: false }), '--password-stdin', ...more], { input: login.password });
    await add('ro', '--context', 'CUSTOMER_ID');
    await add('wrctx', '--allow-write', '--context', 'CUSTOMER_ID');
    const env = { ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' };
    ro = await startShim(env, ['--connection', 'ro']);
    wrctx = await startShim(env, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    for (const shim of [ro, wrctx]) await shim?.close();
    await home.dispose();
    for (const sql of [
      ...Object.keys(functions).map((name) => `DROP FUNCTION IF EXISTS ${name}`),
      `DROP VIEW IF EXISTS my_orders_${s}`,
      `DROP FUNCTION IF EXISTS cust_${s}`,
      `DROP TABLE IF EXISTS mo_${s}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, fn: string, mode: string) => {
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/session-change/);
    expect(textOf(result), textOf(result)).toMatch(new RegExp(`${db}\\.${fn}\\(\\).*a stored function with the ${mode} parameter x`));
    expect(textOf(result)).not.toMatch(/\b(c2|d2)\b/);
  };

  it("refuses a function that passes @mcp_customer_id to an OUT or INOUT parameter, and shows no other customer's rows", async () => {
    for (const [shim, suffix] of [
      [ro, ''],
      [wrctx, ''],
      [wrctx, ' FROM DUAL FOR UPDATE'],
    ] as const) {
      refused(await shim.call('run_query', { sql: `SELECT peeks_${s}('1', '2') AS v${suffix}` }), `setsel_${s}`, 'OUT');
      refused(await shim.call('run_query', { sql: `SELECT peekio_${s}('1', '2') AS v${suffix}` }), `setio_${s}`, 'INOUT');
    }
  });

  it('refuses a statement naming such a function itself', async () => {
    for (const shim of [ro, wrctx])
      refused(await shim.call('run_query', { sql: `SELECT setsel_${s}(@mcp_customer_id, '2') AS r` }), `setsel_${s}`, 'OUT');
  });

  it('still answers the recipe, and a function with only IN parameters taking @mcp_customer_id', async () => {
    for (const shim of [ro, wrctx]) {
      const recipe = await shim.call('run_query', { sql: `SELECT item FROM my_orders_${s} ORDER BY item` });
      expect(recipe.isError, textOf(recipe)).toBeFalsy();
      expect(textOf(recipe)).toMatch(/a1[\s\S]*b1/);
      expect(textOf(recipe)).not.toMatch(/\b(c2|d2)\b/);
      const echo = await shim.call('run_query', { sql: `SELECT echo_${s}(@mcp_customer_id) AS v` });
      expect(echo.isError, textOf(echo)).toBeFalsy();
      expect(textOf(echo)).toMatch(/seen-1/);
    }
  });
});
