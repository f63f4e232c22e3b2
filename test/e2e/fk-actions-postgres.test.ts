/**
 * Deletes and updates of a table a foreign key references, on a writable connection that separates
 * rows, through the real shim and daemon. PostgreSQL runs a key's ON DELETE / ON UPDATE CASCADE,
 * SET NULL and SET DEFAULT as the referencing table's owner and past row-level security: with
 * DELETE granted on a shared `products`, customer 1 deleting a product deleted customer 2's
 * orders for it. Such a write is refused, naming the key and the referencing table, and both
 * tables are unchanged; writes to a table no key's action follows from still answer, as does an
 * INSERT into a referenced one. So is a write whose code deletes from or updates such a table (a
 * trigger on orders or another table, a procedure, a function the statement calls, a rule, a
 * default's BEGIN ATOMIC body: each deleted or changed customer 2's orders before), and code that
 * truncates a separated table the login may truncate (TRUNCATE empties it past row security).
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
  // A person's code a write reaches that deletes from or updates products: a trigger on orders
  // dropping the product of a deleted order (customer 2's order 4 is also for product 1), ...
  `CREATE FUNCTION drop_orphan() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN DELETE FROM products WHERE id = OLD.product_id; RETURN OLD; END $$`,
  'CREATE TRIGGER drop_orphan AFTER DELETE ON orders FOR EACH ROW EXECUTE FUNCTION drop_orphan()',
  // ... a trigger on another table, reached through a procedure's INSERT as well, ...
  'CREATE TABLE tickets (id int PRIMARY KEY, customer_id int NOT NULL, product_id int)',
  `CREATE FUNCTION retire_product() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN UPDATE products SET id = id + 100 WHERE id = NEW.product_id; RETURN NEW; END $$`,
  'CREATE TRIGGER retire AFTER INSERT ON tickets FOR EACH ROW EXECUTE FUNCTION retire_product()',
  `CREATE PROCEDURE open_ticket(tid int, pid int) LANGUAGE plpgsql AS $$
     BEGIN INSERT INTO tickets VALUES (tid, 1, pid); END $$`,
  // ... a function and a procedure granted to the login, ...
  "CREATE FUNCTION delete_product(pid int) RETURNS int LANGUAGE sql AS 'DELETE FROM products WHERE id = pid RETURNING id'",
  'CREATE PROCEDURE remove_product(pid int) LANGUAGE sql BEGIN ATOMIC DELETE FROM products WHERE id = pid; END',
  // ... a rule, and a default whose BEGIN ATOMIC body deletes.
  'CREATE TABLE requests (id int PRIMARY KEY, customer_id int NOT NULL, product_id int)',
  'CREATE RULE purge AS ON INSERT TO requests DO ALSO DELETE FROM products WHERE id = NEW.product_id',
  'CREATE FUNCTION claim_product() RETURNS int LANGUAGE sql BEGIN ATOMIC DELETE FROM products WHERE id = 2 RETURNING id; END',
  'CREATE TABLE claims (id int PRIMARY KEY, customer_id int NOT NULL, product_id int DEFAULT claim_product())',
  // A SECURITY DEFINER function that deletes: refused as such wherever it is reached.
  "CREATE FUNCTION purge_product(pid int) RETURNS int LANGUAGE sql SECURITY DEFINER AS 'DELETE FROM products WHERE id = pid RETURNING id'",
  // A trigger whose body only inserts, and reads products: nothing is carried.
  'CREATE TABLE notes (id int PRIMARY KEY, customer_id int NOT NULL, product_id int)',
  'CREATE TABLE note_log (id int, product text)',
  `CREATE FUNCTION log_note() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN INSERT INTO note_log VALUES (NEW.id, (SELECT name FROM products WHERE id = NEW.product_id)); RETURN NEW; END $$`,
  'CREATE TRIGGER log_note AFTER INSERT ON notes FOR EACH ROW EXECUTE FUNCTION log_note()',
  // A trigger whose body updates regions, whose only key acts ON DELETE: nothing is carried.
  'CREATE TABLE visits (id int PRIMARY KEY, customer_id int NOT NULL, region_id int)',
  `CREATE FUNCTION touch_region() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN UPDATE regions SET name = upper(name) WHERE id = NEW.region_id; RETURN NEW; END $$`,
  'CREATE TRIGGER touch_region AFTER INSERT ON visits FOR EACH ROW EXECUTE FUNCTION touch_region()',
  // TRUNCATE runs past row-level security: a procedure that empties a separated table the login may truncate.
  'CREATE TABLE drafts (id int PRIMARY KEY, customer_id int NOT NULL)',
  'INSERT INTO drafts VALUES (1, 1), (2, 2)',
  'ALTER TABLE drafts ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY mine ON drafts USING (${MINE})`,
  'CREATE PROCEDURE clear_drafts() LANGUAGE plpgsql AS $$ BEGIN TRUNCATE drafts; END $$',
  "CREATE FUNCTION wipe_drafts() RETURNS void LANGUAGE sql AS 'TRUNCATE drafts'",
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
        `GRANT DELETE ON orders TO ${AGENT}`,
        `GRANT SELECT, INSERT ON tickets, requests, claims, notes, note_log, visits TO ${AGENT}`,
        `GRANT SELECT, INSERT, TRUNCATE ON drafts TO ${AGENT}`,
        `GRANT EXECUTE ON FUNCTION delete_product(int) TO ${AGENT}`,
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
  const everything = async () => {
    const out: Record<string, unknown> = {};
    for (const table of ['products', 'orders', 'tickets', 'requests', 'claims', 'drafts', 'suppliers', 'shipments'])
      out[table] = await rows(table);
    return out;
  };

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

  it.each([
    ['DELETE FROM orders WHERE id = 1', 'drop_orphan()', 'DELETE'],
    ['INSERT INTO tickets VALUES (1, 1, 2)', 'retire_product()', 'UPDATE'],
    ['CALL open_ticket(2, 2)', 'retire_product()', 'UPDATE'],
    ['UPDATE suppliers SET name = delete_product(2)::text WHERE id = 2', 'delete_product()', 'DELETE'],
    ['CALL remove_product(2)', 'remove_product()', 'DELETE'],
    ['INSERT INTO requests VALUES (1, 1, 2)', 'rule purge', 'DELETE'],
    ['INSERT INTO claims (id, customer_id) VALUES (1, 1)', 'claim_product()', 'DELETE'],
  ])('refuses %s, whose code deletes from or updates products, and leaves the other customers rows', async (sql, through, event) => {
    const before = await everything();
    const text = refused(await writable.call('run_query', { sql }));
    expect(text).toContain(through);
    expect(text).toContain('products');
    expect(text).toContain('orders_product_id_fkey');
    expect(text).toContain(`ON ${event} RESTRICT or NO ACTION`);
    expect(await everything()).toEqual(before);
    // Customer 2's orders, which customer 1's context hides, are all there.
    expect((await rows('orders'))?.filter((r) => r.customer_id === 2)).toHaveLength(2);
  });

  it('refuses code that truncates a table the login may truncate, and TRUNCATE itself, leaving the other customers rows', async () => {
    const before = await everything();
    for (const sql of ['CALL clear_drafts()', 'INSERT INTO drafts SELECT 3, 1 WHERE wipe_drafts() IS NOT NULL']) {
      const text = refused(await writable.call('run_query', { sql }));
      expect(text).toContain('TRUNCATE');
      expect(text).toContain('drafts');
    }
    for (const sql of ['TRUNCATE drafts', 'TRUNCATE products CASCADE']) {
      const result = await writable.call('run_query', { sql });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('(rule: shared-schema)');
    }
    expect(await everything()).toEqual(before);
    expect(await rows('drafts')).toHaveLength(2);
  });

  it('runs a read that calls a deleting function read-only, where the server refuses the delete', async () => {
    const before = await everything();
    const result = await writable.call('run_query', { sql: 'SELECT delete_product(2)' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('read-only transaction');
    expect(await everything()).toEqual(before);
  });

  it('refuses a SECURITY DEFINER function that deletes, as every such function is', async () => {
    const before = await everything();
    const result = await writable.call('run_query', { sql: 'UPDATE suppliers SET name = purge_product(2)::text WHERE id = 2' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('(rule: denied-function)');
    expect(await everything()).toEqual(before);
  });

  it('answers writes to a table no key action follows from, and an INSERT into a referenced one', async () => {
    for (const sql of [
      "INSERT INTO products VALUES (5, 'five')",
      "UPDATE suppliers SET name = 'renamed' WHERE id = 2",
      'DELETE FROM suppliers WHERE id = 2',
      "INSERT INTO products VALUES (6, 'six') ON CONFLICT (id) DO NOTHING",
      // A trigger that only inserts, and reads the referenced table.
      'INSERT INTO notes VALUES (1, 1, 2)',
      // A trigger that updates a table whose key acts only ON DELETE.
      'INSERT INTO visits VALUES (1, 1, 1)',
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
