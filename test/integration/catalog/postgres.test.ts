import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { PG_URL, serverAvailable } from '../../helpers/engines.js';
import { runCatalogSuite } from './catalog-suite.js';
import { createHarness, type Harness, RUN_ID } from './harness.js';

const SCHEMA = `hanactl_cat_${RUN_ID}`;
const BIG = `hanactl_cat_big_${RUN_ID}`;

const FIXTURE = `
CREATE SCHEMA ${SCHEMA};
SET search_path = ${SCHEMA};
CREATE TABLE customers (id integer PRIMARY KEY, name text NOT NULL, email text, created_at timestamp DEFAULT now());
CREATE UNIQUE INDEX customers_email_key ON customers (email);
CREATE TABLE orders (customer_id integer NOT NULL REFERENCES customers (id), order_no integer NOT NULL, total numeric(10,2) DEFAULT 0,
  PRIMARY KEY (customer_id, order_no));
COMMENT ON TABLE orders IS 'Customer orders';
COMMENT ON COLUMN orders.total IS 'Order total';
CREATE TABLE order_lines (customer_id integer, order_no integer, line_no integer, qty integer NOT NULL,
  PRIMARY KEY (customer_id, order_no, line_no),
  CONSTRAINT order_lines_order_fk FOREIGN KEY (customer_id, order_no) REFERENCES orders (customer_id, order_no));
CREATE INDEX order_lines_qty_idx ON order_lines (qty);
CREATE VIEW big_orders AS SELECT customer_id, order_no, total FROM orders WHERE total > 100;
CREATE TABLE "Mixed Case" (id integer PRIMARY KEY, "Odd""Name" text);
CREATE TABLE canary (id integer PRIMARY KEY);
CREATE FUNCTION order_total(p_customer integer) RETURNS numeric LANGUAGE sql STABLE
  AS $$ SELECT COALESCE(SUM(total), 0) FROM orders WHERE customer_id = p_customer $$;
INSERT INTO customers (id, name, email) VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com'), (3, 'Cy', NULL);
INSERT INTO orders VALUES (1, 1, 150), (1, 2, 20), (2, 1, 99.5);
INSERT INTO order_lines VALUES (1, 1, 1, 3), (1, 1, 2, 1);
INSERT INTO "Mixed Case" VALUES (1, 'quoted');
INSERT INTO canary VALUES (1);
ANALYZE customers, orders, order_lines, "Mixed Case", canary;
CREATE SCHEMA ${BIG};
DO $$ BEGIN
  FOR i IN 1..2000 LOOP EXECUTE format('CREATE TABLE %I.%I (id integer)', '${BIG}', 't' || lpad(i::text, 4, '0')); END LOOP;
END $$;
`;

const available = await serverAvailable('postgres');
let harness: Harness;
const admin = new pg.Client({ connectionString: PG_URL });

describe.skipIf(!available)('catalog on PostgreSQL', () => {
  beforeAll(async () => {
    await admin.connect();
    await admin.query(FIXTURE);
    harness = await createHarness();
    const url = new URL(PG_URL);
    url.searchParams.set('search_path', SCHEMA);
    await harness.add('pg', url.toString());
  });
  afterAll(async () => {
    await harness?.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; DROP SCHEMA IF EXISTS ${BIG} CASCADE`).catch(() => {});
    await admin.end();
  });

  runCatalogSuite({
    harness: () => harness,
    connection: 'pg',
    schema: SCHEMA,
    bigConnection: 'pg',
    bigSchema: BIG,
    routines: { order_total: 'function' },
    rowEstimates: true,
    comments: true,
    heavySql: 'SELECT count(*) FROM generate_series(1, 100000000) a CROSS JOIN generate_series(1, 1000) b',
    canaryRows: async () => Number((await admin.query(`SELECT count(*) AS n FROM ${SCHEMA}.canary`)).rows[0].n),
  });
});
