/**
 * MariaDB's counters of executor work on a connection that separates rows, through the real shim
 * and daemon: a SQL SECURITY DEFINER view filters a table by the caller's context value, and the
 * table has an index on `item`. The index lookup counts the entries the view's filter removes, so
 * Handler_read_next read before and after a `count(*) ... WHERE item = 'x'` rises by one when
 * another customer has 'x', and by none otherwise: an oracle on hidden rows, refused there.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { type CustomerShims, startCustomerShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('mysql');
const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`hstat_${suffix}`);

describe.skipIf(!available)('executor statistics on MariaDB', () => {
  const home = new TestHome();
  const view = `stat_orders_v_${suffix}`;
  let admin: mysql.Connection;
  let shims: CustomerShims;
  let plain: ShimHandle;
  const db = MYSQL_TEST_DB;

  const counter = (name: string) => `(SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME = '${name}')`;
  /** The oracle: Handler_read_next before and after one count (customer 2 has 'item-2-3'; nobody has 'item-2-9'). */
  const oracle = (item: string) =>
    `SELECT ${counter('HANDLER_READ_NEXT')} AS before_, (SELECT count(*) FROM ${view} WHERE item = '${item}') AS visible, ${counter('HANDLER_READ_NEXT')} AS after_`;

  const delta = (result: CallToolResult): number => {
    expect(result.isError, textOf(result)).toBeFalsy();
    const [row] = (result.structuredContent as { rows: { before_: string; visible: string | number; after_: string }[] }).rows;
    expect(Number(row?.visible)).toBe(0);
    return Number(row?.after_) - Number(row?.before_);
  };

  beforeAll(async () => {
    admin = await openMariadbAdmin();
    await admin.query(`CREATE TABLE stat_orders_${suffix} (customer_id INT NOT NULL, item VARCHAR(40) NOT NULL, KEY (item))`);
    await admin.query(`INSERT INTO stat_orders_${suffix} SELECT c.seq, CONCAT('item-', c.seq, '-', g.seq) FROM seq_1_to_3 c, seq_1_to_5 g`);
    await admin.query(`INSERT INTO stat_orders_${suffix} SELECT 3, CONCAT('fill-', g.seq) FROM seq_1_to_2000 g`);
    await admin.query(`ANALYZE TABLE stat_orders_${suffix}`);
    await login.create(admin);
    // The context recipe: the user's own function, so that it may read the body, and a view it may read.
    await admin.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION stat_customer_${suffix}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await admin.query(
      `CREATE SQL SECURITY DEFINER VIEW ${view} AS SELECT customer_id, item FROM stat_orders_${suffix} WHERE customer_id = stat_customer_${suffix}()`,
    );
    await login.grant(admin, [`SELECT, SHOW VIEW ON ${db}.${view}`]);
    for (const name of ['shop', 'plain'])
      await home.ok(['add', '--no-test', name, login.url({ withPassword: false }), '--password-stdin', '--context', 'CUSTOMER_ID'], {
        input: login.password,
      });
    await home.ok(['set', 'plain', '--no-context']);
    shims = await startCustomerShims(home, 'shop');
    plain = await startShim(home.env, ['--connection', 'plain']);
  });

  afterAll(async () => {
    await shims?.close();
    await plain?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS ${view}`,
      `DROP FUNCTION IF EXISTS stat_customer_${suffix}`,
      `DROP TABLE IF EXISTS stat_orders_${suffix}`,
    ])
      await admin?.query(sql).catch(() => {});
    await login.drop(admin);
    await admin?.end();
  });

  it("refuses the status counters before and after a count, so a hidden row's value is not told apart from a missing one", async () => {
    const present = await shims.one.call('run_query', { sql: oracle('item-2-3') });
    const absent = await shims.one.call('run_query', { sql: oracle('item-2-9') });
    // Answered, these differ (Handler_read_next +1 against +0): customer 2's row would show through.
    expect([present.isError, absent.isError], textOf(present)).toEqual([true, true]);
    expect(textOf(present).replace('item-2-3', 'X')).toBe(textOf(absent).replace('item-2-9', 'X'));
    expect(textOf(present)).toMatch(/Refused: SESSION_STATUS reports the executor's statistics/);
    expect(textOf(present)).toContain('(rule: executor-statistics)');
  });

  it.each([
    "SHOW SESSION STATUS LIKE 'Handler_read%'",
    'SHOW GLOBAL STATUS',
    'SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS',
    'SELECT * FROM performance_schema.table_io_waits_summary_by_index_usage',
    'SELECT * FROM sys.schema_index_statistics',
    `SELECT item FROM ${view} WHERE item >= 'item-1-5' ORDER BY item DESC LIMIT ROWS EXAMINED 3`,
  ])('refuses %s where rows are separated', async (sql) => {
    const result = await shims.one.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
  });

  it('keeps the counters where no context names are declared (the user reads them as it would in a client)', async () => {
    // No context value: the view shows this user no row, and the server counts what it read.
    expect(delta(await plain.call('run_query', { sql: oracle('item-2-3') }))).toBe(1);
    expect(delta(await plain.call('run_query', { sql: oracle('item-2-9') }))).toBe(0);
  });

  it("keeps FOUND_ROWS(): it counts the rows the view shows, never another caller's", async () => {
    const two = await shims.two.call('run_query', { sql: `SELECT SQL_CALC_FOUND_ROWS item FROM ${view} LIMIT 1` });
    expect(two.isError, textOf(two)).toBeFalsy();
    const one = await shims.one.call('run_query', { sql: 'SELECT FOUND_ROWS() AS found' });
    expect(one.isError, textOf(one)).toBeFalsy();
    // Customer 2's query found its 5 rows; the next call, on whichever pooled connection, never sees that count.
    const [row] = (one.structuredContent as { rows: { found: number | string }[] }).rows;
    expect(Number(row?.found)).not.toBe(5);
  });
});
