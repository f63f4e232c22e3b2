import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { BIG_TABLES } from './harness.js';

const FIXTURE = `
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE UNIQUE INDEX customers_email_key ON customers (email);
CREATE TABLE orders (customer_id INTEGER NOT NULL REFERENCES customers (id), order_no INTEGER NOT NULL, total NUMERIC(10,2) DEFAULT 0,
  PRIMARY KEY (customer_id, order_no));
CREATE TABLE order_lines (customer_id INTEGER NOT NULL, order_no INTEGER NOT NULL, line_no INTEGER NOT NULL, qty INTEGER NOT NULL,
  PRIMARY KEY (customer_id, order_no, line_no),
  CONSTRAINT order_lines_order_fk FOREIGN KEY (customer_id, order_no) REFERENCES orders (customer_id, order_no));
CREATE INDEX order_lines_qty_idx ON order_lines (qty);
CREATE VIEW big_orders AS SELECT customer_id, order_no, total FROM orders WHERE total > 100;
CREATE TABLE "Mixed Case" (id INTEGER PRIMARY KEY, "Odd""Name" TEXT);
CREATE TABLE canary (id INTEGER PRIMARY KEY);
INSERT INTO customers (id, name, email) VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com'), (3, 'Cy', NULL);
INSERT INTO orders VALUES (1, 1, 150), (1, 2, 20), (2, 1, 99.5);
INSERT INTO order_lines VALUES (1, 1, 1, 3), (1, 1, 2, 1);
INSERT INTO "Mixed Case" VALUES (1, 'quoted');
INSERT INTO canary VALUES (1);
`;

/**
 * Writes the catalog fixture (see catalog-suite.ts) into `dir`/fixture.db and 2,000 tables into
 * `dir`/big.db, each in one transaction.
 */
export function createSqliteFixture(dir: string): { file: string; bigFile: string } {
  const file = join(dir, 'fixture.db');
  const bigFile = join(dir, 'big.db');
  const db = new Database(file);
  db.exec(FIXTURE);
  db.close();
  const big = new Database(bigFile);
  big.exec(`BEGIN; ${BIG_TABLES.map((t) => `CREATE TABLE ${t} (id INTEGER);`).join('\n')} COMMIT;`);
  big.close();
  return { file, bigFile };
}
