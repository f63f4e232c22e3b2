/**
 * Deletes and updates of a table a foreign key references, on a writable connection that separates
 * rows, through the real shim and daemon. PostgreSQL runs a key's ON DELETE / ON UPDATE CASCADE,
 * SET NULL and SET DEFAULT as the referencing table's owner and past row-level security: with
 * DELETE granted on a shared `products`, customer 1 deleting a product deleted customer 2's
 * orders for it. Such a write is refused, naming the key and the referencing table, and both
 * tables are unchanged; writes to a table no key's action follows from still answer, as does an
 * INSERT into a referenced one.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { addShopConnections } from '../helpers/pg-sessions.js';
import { scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_fkact_${process.pid}`;
const AGENT = `${TAG}_agent`;
const PASSWORD = randomBytes(12).toString('hex');
const MINE = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

const OBJECTS = [
  'CREATE TABLE products (id int PRIMARY KEY, name text)',
  "INSERT INTO products VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four')",
  `CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL,
     product_id int REFERENCES products(id) ON DELETE CASCADE ON UPDATE CASCADE)`,
  'INSERT INTO orders VALUES (1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 2, 1)',
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY mine ON orders USING (${MINE})`,
  // A table referenced only by a key that refuses: nothing is carried.
  'CREATE TABLE suppliers (id int PRIMARY KEY, name text)',
  "INSERT INTO suppliers VALUES (1, 's1'), (2, 's2')",
  'CREATE TABLE supplies (id int PRIMARY KEY, customer_id int NOT NULL, supplier_id int REFERENCES suppliers(id) ON DELETE RESTRICT)',
  'INSERT INTO supplies VALUES (1, 2, 1)',
  'ALTER TABLE supplies ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY mine ON supplies USING (${MINE})`,
  // A view over the referenced table: a write through it deletes from products.
  'CREATE VIEW all_products AS SELECT * FROM products',
  // A partitioned referenced table: the key has a copy referencing each partition.
  'CREATE TABLE regions (id int PRIMARY KEY, name text) PARTITION BY RANGE (id)',
  'CREATE TABLE regions_low PARTITION OF regions FOR VALUES FROM (0) TO (100)',
  "INSERT INTO regions VALUES (1, 'r1'), (2, 'r2')",
  'CREATE TABLE shipments (id int PRIMARY KEY, customer_id int NOT NULL, region_id int REFERENCES regions(id) ON DELETE SET NULL)',
  'INSERT INTO shipments VALUES (1, 2, 2)',
  'ALTER TABLE shipments ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY mine ON shipments USING (${MINE})`,
];

describe.skipIf(!available)('writes a foreign key action carries into separated rows on PostgreSQL', () => {
  let scratch: ScratchPgDatabase | undefined;
  const { writable } = scopedAndPlainShims({
    async setUp(home) {
      await asPgSuperuser([`CREATE ROLE ${AGENT} LOGIN PASSWORD '${PASSWORD}'`]);
      scratch = await scratchPgDatabase(TAG, [
        ...OBJECTS,
        `GRANT SELECT, INSERT, UPDATE, DELETE ON products, suppliers, all_products, regions, regions_low TO ${AGENT}`,
        `GRANT SELECT ON orders, supplies, shipments TO ${AGENT}`,
      ]);
      const u = new URL(scratch.url);
      const url = `postgres://${AGENT}@${u.host}${u.pathname}`;
      await addShopConnections(home, url, PASSWORD);
    },
    async dispose() {
      await scratch?.drop();
      await asPgSuperuser([`DROP ROLE IF EXISTS ${AGENT}`], { ignoreErrors: true });
    },
    more: { writable: { connection: 'shop_rw', customer: '1' } },
  });

  const rows = async (table: string) => (await scratch?.db.query(`SELECT * FROM ${table} ORDER BY id`))?.rows;

  const refused = (result: CallToolResult): string => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: fk-action)');
    return text;
  };

  it.each([
    ['DELETE FROM products WHERE id = 2', 'orders_product_id_fkey', 'orders', 'DELETE'],
    ['UPDATE products SET id = 33 WHERE id = 3', 'orders_product_id_fkey', 'orders', 'UPDATE'],
    ["UPDATE products SET name = 'renamed' WHERE id = 3", 'orders_product_id_fkey', 'orders', 'UPDATE'],
    ["INSERT INTO products VALUES (3, 'x') ON CONFLICT (id) DO UPDATE SET id = 34", 'orders_product_id_fkey', 'orders', 'UPDATE'],
    [
      'MERGE INTO products p USING (VALUES (2)) AS s(id) ON p.id = s.id WHEN MATCHED THEN DELETE',
      'orders_product_id_fkey',
      'orders',
      'DELETE',
    ],
    [
      'WITH gone AS (DELETE FROM products WHERE id = 2 RETURNING id) SELECT count(*) FROM gone',
      'orders_product_id_fkey',
      'orders',
      'DELETE',
    ],
    ['DELETE FROM all_products WHERE id = 2', 'orders_product_id_fkey', 'orders', 'DELETE'],
    ['DELETE FROM regions WHERE id = 2', 'shipments_region_id_fkey', 'shipments', 'DELETE'],
    ['DELETE FROM regions_low WHERE id = 2', 'shipments_region_id_fkey', 'shipments', 'DELETE'],
  ])('refuses %s, naming the key and the table, and leaves the other customers rows', async (sql, key, referencing, event) => {
    const before = { orders: await rows('orders'), products: await rows('products'), shipments: await rows('shipments') };
    const text = refused(await writable.call('run_query', { sql }));
    expect(text).toContain(key);
    expect(text).toContain(referencing);
    expect(text).toContain(`ON ${event} RESTRICT or NO ACTION`);
    expect({ orders: await rows('orders'), products: await rows('products'), shipments: await rows('shipments') }).toEqual(before);
  });

  it('answers writes to a table no key action follows from, and an INSERT into a referenced one', async () => {
    for (const sql of [
      "INSERT INTO products VALUES (5, 'five')",
      "UPDATE suppliers SET name = 'renamed' WHERE id = 2",
      'DELETE FROM suppliers WHERE id = 2',
      "INSERT INTO products VALUES (6, 'six') ON CONFLICT (id) DO NOTHING",
    ]) {
      const result = await writable.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
    // RESTRICT refuses on the server: the hidden row stays.
    const restricted = await writable.call('run_query', { sql: 'DELETE FROM suppliers WHERE id = 1' });
    expect(restricted.isError).toBe(true);
    expect(await rows('supplies')).toEqual([{ id: 1, customer_id: 2, supplier_id: 1 }]);
    expect((await rows('products'))?.map((r) => r.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await rows('suppliers'))?.map((r) => r.id)).toEqual([1]);
    expect(await rows('orders')).toHaveLength(4);
  });
});
