/**
 * Triggers a write fires on a writable MariaDB connection carrying context values, through the
 * real shim, daemon and server. A trigger runs with its DEFINER's rights whatever the statement
 * names, so the walk judges the triggers of every table the write may touch (its targets, the
 * tables a trigger body writes) as it judges a DEFINER routine: one that reads a table past the
 * separating view, or calls a DEFINER function that does, is refused, and so is one whose body the
 * login may not read, and a write through an updatable view (whose tables' triggers the login may
 * not see). A trigger that reads nothing still runs.
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
const login = new MariadbLogin(`fmt_${s}`);
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('the triggers a write fires where rows are separated are judged', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let wrctx: ShimHandle;
  const leak = `SET NEW.txt = CONCAT(NEW.txt, ' / ', (SELECT item FROM ${db}.fmt_orders_${s} WHERE id = NEW.order_id))`;
  const tables = ['notes', 'hidden', 'upd', 'del', 'viafn', 'harmless', 'log', 'forge'].map((t) => `fmt_${t}_${s}`);
  const [notes, hidden, upd, del, viafn, harmless, log, forge] = tables as [string, string, string, string, string, string, string, string];
  const view = `fmt_wv_${s}`;
  // Filtered by the recipe's function: the server shows this login a blank IS_UPDATABLE for it.
  const filtered = `fmt_wf_${s}`;

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE fmt_orders_${s} (id INT PRIMARY KEY, customer_id INT NOT NULL, item VARCHAR(40) NOT NULL)`);
    await root.query(`INSERT INTO fmt_orders_${s} VALUES (1, 1, 'apple'), (3, 2, 'SECRET-banana')`);
    for (const t of tables)
      await root.query(`CREATE TABLE ${t} (id INT AUTO_INCREMENT PRIMARY KEY, order_id INT, txt VARCHAR(200), created DATETIME NULL)`);
    await root.query(`INSERT INTO ${upd} (id, order_id, txt) VALUES (1, 1, 'a')`);
    await root.query(`INSERT INTO ${del} (id, order_id, txt) VALUES (1, 3, 'd')`);
    await login.create(root);
    await root.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION fmt_cust_${s}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW fmt_mine_${s} AS SELECT id, item FROM fmt_orders_${s} WHERE customer_id = fmt_cust_${s}() LIMIT 18446744073709551615`,
    );
    await root.query(
      `CREATE FUNCTION fmt_item_${s}(o INT) RETURNS VARCHAR(40) SQL SECURITY DEFINER RETURN (SELECT item FROM fmt_orders_${s} WHERE id = o)`,
    );
    await root.query(`CREATE TRIGGER fmt_tn_${s} BEFORE INSERT ON ${notes} FOR EACH ROW ${leak}`);
    await root.query(`CREATE TRIGGER fmt_th_${s} BEFORE INSERT ON ${hidden} FOR EACH ROW ${leak}`);
    await root.query(`CREATE TRIGGER fmt_tu_${s} BEFORE UPDATE ON ${upd} FOR EACH ROW ${leak}`);
    await root.query(
      `CREATE TRIGGER fmt_td_${s} AFTER DELETE ON ${del} FOR EACH ROW INSERT INTO ${log} (txt) SELECT item FROM fmt_orders_${s} WHERE id = OLD.order_id`,
    );
    await root.query(`CREATE TRIGGER fmt_tf_${s} BEFORE INSERT ON ${viafn} FOR EACH ROW SET NEW.txt = fmt_item_${s}(NEW.order_id)`);
    await root.query(`CREATE TRIGGER fmt_tfo_${s} BEFORE INSERT ON ${forge} FOR EACH ROW SET @mcp_customer_id = '2'`);
    await root.query(`CREATE TRIGGER fmt_tok_${s} BEFORE INSERT ON ${harmless} FOR EACH ROW SET NEW.created = NOW()`);
    await root.query(`CREATE VIEW ${view} AS SELECT id, order_id, txt FROM ${notes}`);
    await root.query(
      `CREATE SQL SECURITY DEFINER VIEW ${filtered} AS SELECT id, customer_id, item FROM fmt_orders_${s} WHERE customer_id = fmt_cust_${s}() WITH CASCADED CHECK OPTION`,
    );
    await login.grant(root, [
      'SELECT ON mysql.proc',
      `SELECT, SHOW VIEW ON ${db}.fmt_mine_${s}`,
      `SELECT, INSERT ON ${db}.${hidden}`,
      `SELECT, INSERT ON ${db}.${view}`,
      `SELECT, INSERT, UPDATE, DELETE, SHOW VIEW ON ${db}.${filtered}`,
      ...[notes, upd, del, viafn, harmless, forge].map((t) => `SELECT, INSERT, UPDATE, DELETE, TRIGGER ON ${db}.${t}`),
    ]);
    home.ok(
      ['add', '--no-test', 'wrctx', login.url({ withPassword: false }), '--password-stdin', '--allow-write', '--context', 'CUSTOMER_ID'],
      {
        input: login.password,
      },
    );
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    await wrctx?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS ${view}`,
      `DROP VIEW IF EXISTS ${filtered}`,
      `DROP VIEW IF EXISTS fmt_mine_${s}`,
      ...tables.map((t) => `DROP TABLE IF EXISTS ${t}`),
      `DROP TABLE IF EXISTS fmt_orders_${s}`,
      `DROP FUNCTION IF EXISTS fmt_cust_${s}`,
      `DROP FUNCTION IF EXISTS fmt_item_${s}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>, ...parts: RegExp[]) => {
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/stored-routine/);
    for (const part of parts) expect(textOf(result), textOf(result)).toMatch(part);
    expect(textOf(result)).not.toMatch(/SECRET/);
  };
  const rows = async (table: string): Promise<string> => {
    const [found] = (await root.query(`SELECT order_id, txt FROM ${table} ORDER BY id`)) as unknown as [unknown[]];
    return JSON.stringify(found);
  };

  it("refuses an insert whose trigger reads another customer's row with its owner's rights, and writes nothing", async () => {
    refused(
      await wrctx.call('run_query', { sql: `INSERT INTO ${notes} (order_id, txt) VALUES (3, 'hi')` }),
      new RegExp(`trigger ${db}\\.fmt_tn_${s} on ${db}\\.${notes}`),
    );
    // ANALYZE runs the statement: refused where rows are separated before any trigger fires.
    const analyzed = await wrctx.call('run_query', { sql: `ANALYZE INSERT INTO ${notes} (order_id, txt) VALUES (3, 'hi')` });
    expect(analyzed.isError, textOf(analyzed)).toBe(true);
    refused(
      await wrctx.call('run_query', { sql: `REPLACE INTO ${notes} (id, order_id, txt) VALUES (1, 3, 'hi')` }),
      new RegExp(`fmt_tn_${s}`),
    );
    expect(await rows(notes)).toBe('[]');
  });

  it('refuses an insert whose trigger this login may not read', async () => {
    refused(
      await wrctx.call('run_query', { sql: `INSERT INTO ${hidden} (order_id, txt) VALUES (3, 'hi')` }),
      new RegExp(`trigger ${db}\\.fmt_th_${s} on ${db}\\.${hidden}`),
      /GRANT TRIGGER/,
    );
    expect(await rows(hidden)).toBe('[]');
  });

  it('refuses the update and delete triggers, ON DUPLICATE KEY UPDATE among them', async () => {
    refused(await wrctx.call('run_query', { sql: `UPDATE ${upd} SET order_id = 3 WHERE id = 1` }), new RegExp(`fmt_tu_${s}`));
    refused(
      await wrctx.call('run_query', {
        sql: `INSERT INTO ${upd} (id, order_id, txt) VALUES (1, 3, 'x') ON DUPLICATE KEY UPDATE order_id = 3`,
      }),
      new RegExp(`fmt_tu_${s}`),
    );
    refused(
      await wrctx.call('run_query', { sql: `UPDATE ${upd} u, fmt_mine_${s} m SET u.order_id = 3 WHERE u.id = 1` }),
      new RegExp(`fmt_tu_${s}`),
    );
    expect(await rows(upd)).toBe('[{"order_id":1,"txt":"a"}]');
    refused(await wrctx.call('run_query', { sql: `DELETE FROM ${del} WHERE id = 1` }), new RegExp(`fmt_td_${s}`));
    expect(await rows(del)).toBe('[{"order_id":3,"txt":"d"}]');
    expect(await rows(log)).toBe('[]');
  });

  it('refuses a write through an updatable view onto a table with a trigger', async () => {
    refused(
      await wrctx.call('run_query', { sql: `INSERT INTO ${view} (order_id, txt) VALUES (3, 'hi')` }),
      new RegExp(`view ${db}\\.${view}`),
    );
    expect(await rows(notes)).toBe('[]');
  });

  it('refuses writes through a view the server may not call updatable for this login, whose rows another customer shares', async () => {
    for (const sql of [
      `INSERT INTO ${filtered} (id, customer_id, item) VALUES (3, 1, 'x') ON DUPLICATE KEY UPDATE customer_id = 1`,
      `REPLACE INTO ${filtered} (id, customer_id, item) VALUES (3, 1, 'x')`,
      `UPDATE ${filtered} SET item = 'x' WHERE id = 1`,
      `DELETE FROM ${filtered} WHERE item = 'SECRET-banana'`,
    ])
      refused(await wrctx.call('run_query', { sql }), new RegExp(`view ${db}\\.${filtered}`));
    const [kept] = (await root.query(`SELECT id, customer_id, item FROM fmt_orders_${s} ORDER BY id`)) as unknown as [unknown[]];
    expect(kept).toEqual([
      { id: 1, customer_id: 1, item: 'apple' },
      { id: 3, customer_id: 2, item: 'SECRET-banana' },
    ]);
  });

  it('still reads through the recipe view, which is not updatable, in a write', async () => {
    const result = await wrctx.call('run_query', { sql: `INSERT INTO ${harmless} (order_id, txt) SELECT id, item FROM fmt_mine_${s}` });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [found] = (await root.query(`SELECT order_id, txt FROM ${harmless} WHERE order_id = 1 AND txt = 'apple'`)) as unknown as [
      unknown[],
    ];
    expect(found).toHaveLength(1);
    await root.query(`DELETE FROM ${harmless}`);
  });

  it('refuses a trigger that calls a DEFINER function reading the table', async () => {
    refused(
      await wrctx.call('run_query', { sql: `INSERT INTO ${viafn} (order_id, txt) VALUES (3, 'hi')` }),
      new RegExp(`fmt_item_${s}`),
      new RegExp(`fmt_tf_${s}`),
    );
    expect(await rows(viafn)).toBe('[]');
  });

  it('refuses a trigger that assigns a context value', async () => {
    const result = await wrctx.call('run_query', { sql: `INSERT INTO ${forge} (order_id, txt) VALUES (1, 'x')` });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(new RegExp(`trigger ${db}\\.fmt_tfo_${s} on ${db}\\.${forge}.*@mcp_customer_id`));
    expect(await rows(forge)).toBe('[]');
  });

  it('runs a write whose trigger reads nothing', async () => {
    const result = await wrctx.call('run_query', { sql: `INSERT INTO ${harmless} (order_id, txt) VALUES (1, 'ok')` });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [found] = (await root.query(`SELECT txt, created IS NOT NULL AS stamped FROM ${harmless}`)) as unknown as [unknown[]];
    expect(found).toEqual([{ txt: 'ok', stamped: 1 }]);
  });
});
