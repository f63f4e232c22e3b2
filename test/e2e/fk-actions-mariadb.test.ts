/**
 * Deletes and updates of a table a foreign key may reference, on a writable MariaDB connection
 * carrying context values, through the real shim, daemon and server. InnoDB runs a key's ON DELETE
 * / ON UPDATE CASCADE or SET NULL past any separation: with DELETE granted on a shared `products`,
 * customer 1 deleting a product deleted customer 2's orders, kept behind the recipe's view. The
 * login is shown no key of a table it holds no privilege on, so such a write to an InnoDB table
 * with an index is refused and both tables are unchanged; an INSERT into it, and writes to a table
 * no key can reference, still answer.
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
const login = new MariadbLogin(`fka_${s}`);
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('writes a foreign key action carries into separated rows on MariaDB', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let wrctx: ShimHandle;
  const products = `fka_products_${s}`;
  const orders = `fka_orders_${s}`;
  const notes = `fka_notes_${s}`;
  const mine = `fka_mine_${s}`;
  const renames = `fka_renames_${s}`;

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE TABLE ${products} (id INT PRIMARY KEY, name VARCHAR(40)) ENGINE=InnoDB`);
    await root.query(`INSERT INTO ${products} VALUES (1, 'one'), (2, 'two'), (3, 'three')`);
    await root.query(
      `CREATE TABLE ${orders} (id INT PRIMARY KEY, customer_id INT NOT NULL, product_id INT,
         FOREIGN KEY (product_id) REFERENCES ${products}(id) ON DELETE CASCADE ON UPDATE CASCADE) ENGINE=InnoDB`,
    );
    await root.query(`INSERT INTO ${orders} VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3)`);
    // A table no key can reference: Aria has no foreign keys.
    await root.query(`CREATE TABLE ${notes} (id INT PRIMARY KEY, txt VARCHAR(40)) ENGINE=Aria`);
    await root.query(`INSERT INTO ${notes} VALUES (1, 'a'), (2, 'b')`);
    await login.create(root);
    await root.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION fka_cust_${s}() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await root.query(
      `CREATE ALGORITHM=TEMPTABLE SQL SECURITY DEFINER VIEW ${mine} AS SELECT id, product_id FROM ${orders} WHERE customer_id = fka_cust_${s}() LIMIT 18446744073709551615`,
    );
    // A person's trigger whose UPDATE runs under SET STATEMENT ... FOR (a lock-timeout idiom).
    await root.query(`CREATE TABLE ${renames} (old_id INT, new_id INT) ENGINE=Aria`);
    await root.query(
      `CREATE TRIGGER ${renames}_ai AFTER INSERT ON ${renames} FOR EACH ROW SET STATEMENT innodb_lock_wait_timeout=5 FOR UPDATE ${products} SET id = NEW.new_id WHERE id = NEW.old_id`,
    );
    await login.grant(root, [`INSERT, TRIGGER ON ${db}.${renames}`]);
    await login.grant(root, [
      `SELECT, SHOW VIEW ON ${db}.${mine}`,
      `SELECT, INSERT, UPDATE, DELETE ON ${db}.${products}`,
      `SELECT, INSERT, UPDATE, DELETE ON ${db}.${notes}`,
    ]);
    home.ok(
      ['add', '--no-test', 'wrctx', login.url({ withPassword: false }), '--password-stdin', '--allow-write', '--context', 'CUSTOMER_ID'],
      { input: login.password },
    );
    wrctx = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'wrctx']);
  });

  afterAll(async () => {
    await wrctx?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS ${mine}`,
      `DROP TABLE IF EXISTS ${orders}`,
      `DROP TABLE IF EXISTS ${products}`,
      `DROP TABLE IF EXISTS ${notes}`,
      `DROP TABLE IF EXISTS ${renames}`,
      `DROP FUNCTION IF EXISTS fka_cust_${s}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const rows = async (table: string): Promise<string> => {
    const [found] = (await root.query(`SELECT * FROM ${table} ORDER BY id`)) as unknown as [unknown[]];
    return JSON.stringify(found);
  };

  it.each([
    `DELETE FROM ${products} WHERE id = 2`,
    `UPDATE ${products} SET id = 33 WHERE id = 3`,
    `REPLACE INTO ${products} (id, name) VALUES (2, 'again')`,
    `INSERT INTO ${products} (id, name) VALUES (3, 'x') ON DUPLICATE KEY UPDATE id = 34`,
    `DELETE p FROM ${products} AS p WHERE p.id = 2`,
    // The server reads an executable comment's text as code, the version's digits glued to the
    // keyword; a comment between FOR and UPDATE does not make the UPDATE a locking read.
    `/*!100000DELETE*/ FROM ${products} WHERE id = 2`,
    `/*M!100000DELETE*/ FROM ${products} WHERE id = 2`,
    `/*!100000REPLACE*/ INTO ${products} VALUES (3, 'three again')`,
    `# FOR\nUPDATE ${products} SET id = 40 WHERE id = 3`,
    `-- FOR\nUPDATE ${products} SET id = 40 WHERE id = 3`,
    `INSERT INTO ${products} VALUES (1, 'x') ON DUPLICATE KEY -- FOR\nUPDATE id = 10`,
  ])("refuses %s, and the other customers' orders are intact", async (sql) => {
    const before = [await rows(orders), await rows(products)];
    const result = await wrctx.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: fk-action)');
    expect(textOf(result)).toContain(`${db}.${products}`);
    expect([await rows(orders), await rows(products)]).toEqual(before);
  });

  it("refuses an INSERT whose trigger updates the referenced table under SET STATEMENT ... FOR, and the orders are intact", async () => {
    const before = [await rows(orders), await rows(products)];
    const result = await wrctx.call('run_query', { sql: `INSERT INTO ${renames} VALUES (2, 222)` });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: fk-action)');
    expect(textOf(result)).toContain(`${renames}_ai`);
    expect([await rows(orders), await rows(products)]).toEqual(before);
  });

  it('answers an INSERT into the referenced table, writes to a table no key can reference, and reads', async () => {
    for (const sql of [
      `INSERT INTO ${products} (id, name) VALUES (4, 'four')`,
      `UPDATE ${notes} SET txt = 'renamed' WHERE id = 1`,
      `DELETE FROM ${notes} WHERE id = 2`,
      `SELECT REPLACE(name, 'o', '0') FROM ${products} WHERE id = 1`,
      `SELECT * FROM ${mine}`,
    ]) {
      const result = await wrctx.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
    expect(await rows(notes)).toBe(JSON.stringify([{ id: 1, txt: 'renamed' }]));
    expect(await rows(orders)).toBe(
      JSON.stringify([
        { id: 1, customer_id: 1, product_id: 1 },
        { id: 2, customer_id: 2, product_id: 2 },
        { id: 3, customer_id: 3, product_id: 3 },
      ]),
    );
  });
});
