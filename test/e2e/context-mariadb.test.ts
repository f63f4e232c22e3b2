import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
const user = `hctx_${suffix}`.slice(0, 32);
const password = randomBytes(12).toString('hex');

describe.skipIf(!available)('context parameters scope MariaDB through a DEFINER function and view', () => {
  const home = new TestHome();
  let admin: mysql.Connection;
  let one: ShimHandle;
  let two: ShimHandle;
  const u = new URL(MYSQL_URL);
  const db = u.pathname.slice(1);

  beforeAll(async () => {
    admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), database: db });
    await admin.query(`CREATE TABLE orders_${suffix} (customer_id INT NOT NULL, item VARCHAR(40) NOT NULL)`);
    await admin.query(`INSERT INTO orders_${suffix} SELECT c.seq, CONCAT('item-', c.seq, '-', g.seq) FROM seq_1_to_3 c, seq_1_to_5 g`);
    // A DBA's building blocks: a DEFINER function reads the caller's session variable; a view filters by it.
    await admin.query(`CREATE FUNCTION mcp_customer_${suffix}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY DEFINER RETURN @mcp_customer_id`);
    await admin.query(
      `CREATE SQL SECURITY DEFINER VIEW my_orders_${suffix} AS SELECT customer_id, item FROM orders_${suffix} WHERE customer_id = mcp_customer_${suffix}()`,
    );
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
    await admin.query(`CREATE USER '${user}'@'localhost' IDENTIFIED BY '${password}'`);
    for (const host of ['%', 'localhost']) await admin.query(`GRANT SELECT ON ${db}.my_orders_${suffix} TO '${user}'@'${host}'`);
    await home.ok(['add', 'shop', `mariadb://${user}@${u.host}/${db}`, '--password-stdin', '--context', 'CUSTOMER_ID'], { input: password });
    one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    two = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '2' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS my_orders_${suffix}`,
      `DROP FUNCTION IF EXISTS mcp_customer_${suffix}`,
      `DROP TABLE IF EXISTS orders_${suffix}`,
      `DROP USER IF EXISTS '${user}'@'%'`,
      `DROP USER IF EXISTS '${user}'@'localhost'`,
    ])
      await admin?.query(sql).catch(() => {});
    await admin?.end();
  });

  const select = `SELECT customer_id, item FROM my_orders_${suffix}`;
  const foreignRows = (result: Awaited<ReturnType<ShimHandle['call']>>, customer: number): number => {
    expect(result.isError, textOf(result)).toBeFalsy();
    const rows = (result.structuredContent as { rows: { customer_id: number }[] }).rows;
    expect(rows).toHaveLength(5);
    return rows.filter((r) => r.customer_id !== customer).length;
  };

  it('interleaved concurrent calls from two callers never see each other’s rows', async () => {
    let leaks = 0;
    for (let batch = 0; batch < 15; batch++) {
      const [a1, b1, a2, b2] = await Promise.all([
        one.call('run_query', { sql: select }),
        two.call('run_query', { sql: select }),
        one.call('run_query', { sql: select }),
        two.call('run_query', { sql: select }),
      ]);
      leaks += foreignRows(a1!, 1) + foreignRows(b1!, 2) + foreignRows(a2!, 1) + foreignRows(b2!, 2);
    }
    expect(leaks).toBe(0);
  });

  it('stays isolated after an error and a killed connection on the previous borrower', async () => {
    expect((await one.call('run_query', { sql: 'SELECT * FROM no_such_table' })).isError).toBe(true);
    const [rows] = await admin.query(`SELECT ID FROM information_schema.PROCESSLIST WHERE USER = ?`, [user]);
    for (const { ID } of rows as { ID: number }[]) await admin.query(`KILL ${ID}`).catch(() => {});
    let leaks = 0;
    for (let i = 0; i < 6; i++) {
      const [a, b] = await Promise.all([one.call('run_query', { sql: select }), two.call('run_query', { sql: select })]);
      if (a.isError || b.isError) continue;
      leaks += foreignRows(a, 1) + foreignRows(b, 2);
    }
    expect(leaks).toBe(0);
    expect(foreignRows(await two.call('run_query', { sql: select }), 2)).toBe(0);
  });
});
