import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type CustomerShims, foreignRows, interleavedLeaks, leaksAfterFault, startCustomerShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('mysql');
const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`hctx_${suffix}`);
const { user, password } = login;

describe.skipIf(!available)('context parameters scope MariaDB through a function the agent reads and a DEFINER view', () => {
  const home = new TestHome();
  let admin: mysql.Connection;
  let shims: CustomerShims;
  const u = new URL(MYSQL_URL);
  const db = MYSQL_TEST_DB;

  beforeAll(async () => {
    admin = await openMariadbAdmin();
    await admin.query(`CREATE TABLE orders_${suffix} (customer_id INT NOT NULL, item VARCHAR(40) NOT NULL, KEY (item))`);
    await admin.query(`INSERT INTO orders_${suffix} SELECT c.seq, CONCAT('item-', c.seq, '-', g.seq) FROM seq_1_to_3 c, seq_1_to_5 g`);
    // Enough rows elsewhere that a narrow condition on item is answered through its index.
    await admin.query(`INSERT INTO orders_${suffix} SELECT 4, CONCAT('fill-', seq) FROM seq_1_to_2000`);
    await admin.query(`ANALYZE TABLE orders_${suffix}`);
    await login.create(admin);
    // A DBA's building blocks (docs/context-parameters.md): a function reads the caller's session
    // variable, made with the agent's account as DEFINER so that the agent may read its body; a
    // DEFINER view filters by it.
    await admin.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION mcp_customer_${suffix}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await admin.query(
      `CREATE SQL SECURITY DEFINER VIEW my_orders_${suffix} AS SELECT customer_id, item FROM orders_${suffix} WHERE customer_id = mcp_customer_${suffix}()`,
    );
    // The recipe's view: ALGORITHM=TEMPTABLE selects the caller's rows before the caller's conditions run.
    await admin.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW temp_orders_${suffix} AS SELECT customer_id, item FROM orders_${suffix} WHERE customer_id = mcp_customer_${suffix}()`,
    );
    // The recipe as documented: a LIMIT keeps the server from pushing conditions into the view.
    await admin.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW recipe_orders_${suffix} AS SELECT customer_id, item FROM orders_${suffix} WHERE customer_id = mcp_customer_${suffix}() LIMIT 18446744073709551615`,
    );
    // SHOW VIEW lets the agent read each view's definition, so that hanactl judges what it runs.
    await login.grant(
      admin,
      [`my_orders_${suffix}`, `temp_orders_${suffix}`, `recipe_orders_${suffix}`].map((view) => `SELECT, SHOW VIEW ON ${db}.${view}`),
    );
    await home.ok(['add', '--no-test', 'shop', login.url({ withPassword: false }), '--password-stdin', '--context', 'CUSTOMER_ID'], {
      input: password,
    });
    shims = await startCustomerShims(home, 'shop');
  });

  afterAll(async () => {
    await shims?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS my_orders_${suffix}`,
      `DROP VIEW IF EXISTS temp_orders_${suffix}`,
      `DROP VIEW IF EXISTS recipe_orders_${suffix}`,
      `DROP FUNCTION IF EXISTS mcp_customer_${suffix}`,
      `DROP TABLE IF EXISTS orders_${suffix}`,
    ])
      await admin?.query(sql).catch(() => {});
    await login.drop(admin);
    await admin?.end();
  });

  const select = `SELECT customer_id, item FROM my_orders_${suffix}`;
  /** Each caller sees exactly its own 5 rows through the view. */
  const check = { rows: 5 };

  it('interleaved concurrent calls from two callers never see each other’s rows', async () => {
    expect(await interleavedLeaks(shims.one, shims.two, select, { ...check, batches: 3 })).toBe(0);
  });

  it('stays isolated after an error and a killed connection on the previous borrower', async () => {
    expect((await shims.one.call('run_query', { sql: 'SELECT * FROM no_such_table' })).isError).toBe(true);
    const [rows] = await admin.query(`SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?`, [user]);
    for (const { ID } of rows as { ID: number }[]) await admin.query(`KILL ${ID}`).catch(() => {});
    expect(await leaksAfterFault(shims.one, shims.two, select, check)).toBe(0);
    expect(foreignRows(await shims.two.call('run_query', { sql: select }), 2, check)).toBe(0);
  });

  it("a condition that fails on a hidden row tells it apart through a merged view, not through the recipe's TEMPTABLE view", async () => {
    /** Errors only where a row holding `item` reaches the condition. */
    const probe = (view: string, item: string) =>
      shims.one.call('run_query', { sql: `SELECT count(*) AS n FROM ${view}_${suffix} WHERE IF(item = '${item}', EXP(1000), 0) = 0` });
    const answer = (result: Awaited<ReturnType<typeof probe>>) => (result.isError ? 'error' : JSON.stringify(result.structuredContent));
    // Customer 2 holds item-2-3; nobody holds item-2-9. The merged view evaluates the caller's
    // condition on customer 2's rows too: the documented limit of that view, kept visible here.
    expect(answer(await probe('my_orders', 'item-2-3'))).toBe('error');
    expect(answer(await probe('my_orders', 'item-2-9'))).not.toBe('error');
    // The TEMPTABLE view answers alike, and shows customer 1's own 5 rows either way.
    const present = answer(await probe('temp_orders', 'item-2-3'));
    expect(present).toBe(answer(await probe('temp_orders', 'item-2-9')));
    expect(present).toMatch(/"n":5/);
    // A hidden row is still not a row of the result: customer 1's own item errors as it should.
    expect(answer(await probe('temp_orders', 'item-1-3'))).toBe('error');
  });

  it('a narrow condition on an indexed column is not pushed into the view ahead of its filter', async () => {
    /** `item = x` narrows to the index; the IF errors on any row it meets. */
    const probe = (view: string, item: string) =>
      `SELECT count(*) AS n FROM ${view}_${suffix} WHERE item = '${item}' AND IF(LENGTH(item) > 0, EXP(1000), 0) = 0`;
    const answer = (result: Awaited<ReturnType<typeof shims.one.call>>) =>
      result.isError ? 'error' : JSON.stringify(result.structuredContent);
    // Through hanactl, where the call carries context values, conditions are not pushed down.
    for (const view of ['temp_orders', 'recipe_orders']) {
      const present = answer(await shims.one.call('run_query', { sql: probe(view, 'item-2-3') }));
      expect(present, view).toBe(answer(await shims.one.call('run_query', { sql: probe(view, 'item-2-9') })));
      expect(present, view).toMatch(/"n":0/);
    }
    // The recipe's LIMIT holds on its own, with the server's default pushdown (a client other than hanactl).
    const direct = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user, password, database: db });
    try {
      await direct.query("SET @mcp_customer_id = '1'");
      const [rows] = await direct.query(probe('recipe_orders', 'item-2-3'));
      expect(rows).toEqual([{ n: 0 }]);
      // Without the LIMIT the pushed-down condition meets customer 2's row: the reason for the recipe's LIMIT.
      await expect(direct.query(probe('temp_orders', 'item-2-3'))).rejects.toThrow(/out of range/);
    } finally {
      await direct.end();
    }
  });

  it("describe_table shows the recipe view's columns to the user that may only select from it", async () => {
    // information_schema.COLUMNS lists no column of a view over a function the user may not
    // execute (the server opens the view as the caller to list them); the view's own result does.
    for (const view of [`recipe_orders_${suffix}`, `my_orders_${suffix}`]) {
      const described = await shims.one.call('describe_table', { table: view });
      expect(described.isError, view).toBeFalsy();
      expect(described.structuredContent, view).toMatchObject({
        table: view,
        kind: 'view',
        columns: [expect.objectContaining({ name: 'customer_id' }), expect.objectContaining({ name: 'item' })],
      });
    }
  });
});
