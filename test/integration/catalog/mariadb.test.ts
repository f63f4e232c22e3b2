import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe } from 'vitest';
import { runCatalogSuite } from './catalog-suite.js';
import { BIG_TABLES, createHarness, type Harness, MYSQL_ADMIN_URL, mysqlAdmin, mysqlAvailable, RUN_ID } from './harness.js';

const DB = `hanactl_cat_${RUN_ID}`;
const BIG = `hanactl_cat_big_${RUN_ID}`;

const FIXTURE = `
CREATE DATABASE ${DB};
USE ${DB};
CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200), created_at TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP,
  UNIQUE KEY customers_email_key (email));
CREATE TABLE orders (customer_id INT NOT NULL, order_no INT NOT NULL, total DECIMAL(10,2) DEFAULT 0 COMMENT 'Order total',
  PRIMARY KEY (customer_id, order_no), CONSTRAINT orders_customer_fk FOREIGN KEY (customer_id) REFERENCES customers (id)) COMMENT = 'Customer orders';
CREATE TABLE order_lines (customer_id INT, order_no INT, line_no INT, qty INT NOT NULL,
  PRIMARY KEY (customer_id, order_no, line_no), KEY order_lines_qty_idx (qty),
  CONSTRAINT order_lines_order_fk FOREIGN KEY (customer_id, order_no) REFERENCES orders (customer_id, order_no));
CREATE VIEW big_orders AS SELECT customer_id, order_no, total FROM orders WHERE total > 100;
CREATE TABLE \`Mixed Case\` (id INT PRIMARY KEY, \`Odd"Name\` TEXT);
CREATE TABLE canary (id INT PRIMARY KEY);
CREATE FUNCTION order_total(p_customer INT) RETURNS DECIMAL(10,2) READS SQL DATA
  RETURN (SELECT COALESCE(SUM(total), 0) FROM orders WHERE customer_id = p_customer);
CREATE PROCEDURE refresh_totals(IN p_customer INT) READS SQL DATA SELECT order_total(p_customer) AS total;
INSERT INTO customers (id, name, email) VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com'), (3, 'Cy', NULL);
INSERT INTO orders VALUES (1, 1, 150), (1, 2, 20), (2, 1, 99.5);
INSERT INTO order_lines VALUES (1, 1, 1, 3), (1, 1, 2, 1);
INSERT INTO \`Mixed Case\` VALUES (1, 'quoted');
INSERT INTO canary VALUES (1);
ANALYZE TABLE customers, orders, order_lines;
CREATE DATABASE ${BIG};
${BIG_TABLES.map((t) => `CREATE TABLE ${BIG}.${t} (id INT) ENGINE=MEMORY;`).join('\n')}
`;

const available = await mysqlAvailable();
let harness: Harness;
let admin: mysql.Connection;

describe.skipIf(!available)('catalog on MariaDB', () => {
  beforeAll(async () => {
    admin = await mysqlAdmin();
    await admin.query(FIXTURE);
    harness = await createHarness();
    const url = new URL(MYSQL_ADMIN_URL);
    url.pathname = `/${DB}`;
    await harness.add('maria', url.toString());
  });
  afterAll(async () => {
    await harness?.close();
    await admin?.query(`DROP DATABASE IF EXISTS ${DB}; DROP DATABASE IF EXISTS ${BIG}`).catch(() => {});
    await admin?.end();
  });

  runCatalogSuite({
    harness: () => harness,
    connection: 'maria',
    schema: DB,
    bigConnection: 'maria',
    bigSchema: BIG,
    routines: { order_total: 'function', refresh_totals: 'procedure' },
    rowEstimates: true,
    comments: true,
    heavySql: 'SELECT COUNT(*) FROM seq_1_to_100000000 a JOIN seq_1_to_1000 b',
    canaryRows: async () => {
      const [rows] = await admin.query(`SELECT COUNT(*) AS n FROM ${DB}.canary`);
      return Number((rows as { n: number }[])[0]?.n);
    },
  });
});
