import { afterAll, beforeAll, describe } from 'vitest';
import type { DriverConnection } from '../../../daemon/engines/driver.js';
import { HanaDriver } from '../../../daemon/engines/hana/hana-driver.js';
import { parseConnectionUrl } from '../../../shared/connection-url.js';
import { runCatalogSuite } from './catalog-suite.js';
import { createHarness, type Harness, RUN_ID } from './harness.js';

/**
 * The catalog suite against a real SAP HANA, when HANA_TEST_URL is set:
 *   HANA_TEST_URL='hana://USER:PASSWORD@host:port/TENANT?encrypt=true' npx vitest run test/integration/catalog/hana.test.ts
 * The user needs CREATE SCHEMA. Names are quoted lower case so the shared suite reads the same.
 */
const LIVE_URL = process.env.HANA_TEST_URL;
if (!LIVE_URL)
  console.log('Live SAP HANA catalog tests skipped: HANA_TEST_URL is unset (hana://user:password@host:port/tenant?encrypt=true).');

const S = `HANACTL_CAT_${RUN_ID.toUpperCase()}`;
const BIG = `HANACTL_CAT_BIG_${RUN_ID.toUpperCase()}`;
const FIXTURE = [
  `CREATE SCHEMA ${S}`,
  `CREATE COLUMN TABLE ${S}."customers" ("id" INTEGER PRIMARY KEY, "name" NVARCHAR(100) NOT NULL, "email" NVARCHAR(200), "created_at" TIMESTAMP DEFAULT CURRENT_TIMESTAMP)`,
  `CREATE UNIQUE INDEX ${S}."customers_email_key" ON ${S}."customers" ("email")`,
  `CREATE COLUMN TABLE ${S}."orders" ("customer_id" INTEGER NOT NULL, "order_no" INTEGER NOT NULL, "total" DECIMAL(10,2) DEFAULT 0,
     PRIMARY KEY ("customer_id", "order_no"), FOREIGN KEY ("customer_id") REFERENCES ${S}."customers" ("id"))`,
  `COMMENT ON TABLE ${S}."orders" IS 'Customer orders'`,
  `CREATE COLUMN TABLE ${S}."order_lines" ("customer_id" INTEGER NOT NULL, "order_no" INTEGER NOT NULL, "line_no" INTEGER NOT NULL, "qty" INTEGER NOT NULL,
     PRIMARY KEY ("customer_id", "order_no", "line_no"),
     CONSTRAINT "order_lines_order_fk" FOREIGN KEY ("customer_id", "order_no") REFERENCES ${S}."orders" ("customer_id", "order_no"))`,
  `CREATE INDEX ${S}."order_lines_qty_idx" ON ${S}."order_lines" ("qty")`,
  `CREATE VIEW ${S}."big_orders" AS SELECT "customer_id", "order_no", "total" FROM ${S}."orders" WHERE "total" > 100`,
  `CREATE COLUMN TABLE ${S}."Mixed Case" ("id" INTEGER PRIMARY KEY, "Odd""Name" NVARCHAR(100))`,
  `CREATE COLUMN TABLE ${S}."canary" ("id" INTEGER PRIMARY KEY)`,
  `CREATE FUNCTION ${S}."order_total"(p_customer INTEGER) RETURNS r DECIMAL(10,2) AS
     BEGIN SELECT COALESCE(SUM("total"), 0) INTO r FROM ${S}."orders" WHERE "customer_id" = :p_customer; END`,
  `CREATE PROCEDURE ${S}."refresh_totals"(IN p_customer INTEGER) READS SQL DATA AS
     BEGIN SELECT ${S}."order_total"(:p_customer) AS "total" FROM DUMMY; END`,
  `INSERT INTO ${S}."customers" ("id", "name", "email") VALUES (1, 'Ada', 'ada@example.com')`,
  `INSERT INTO ${S}."customers" ("id", "name", "email") VALUES (2, 'Bob', 'bob@example.com')`,
  `INSERT INTO ${S}."customers" ("id", "name", "email") VALUES (3, 'Cy', NULL)`,
  `INSERT INTO ${S}."orders" VALUES (1, 1, 150)`,
  `INSERT INTO ${S}."orders" VALUES (1, 2, 20)`,
  `INSERT INTO ${S}."orders" VALUES (2, 1, 99.5)`,
  `INSERT INTO ${S}."order_lines" VALUES (1, 1, 1, 3)`,
  `INSERT INTO ${S}."Mixed Case" VALUES (1, 'quoted')`,
  `INSERT INTO ${S}."canary" VALUES (1)`,
  `CREATE SCHEMA ${BIG}`,
  `DO BEGIN
     FOR i IN 1..2000 DO
       EXECUTE IMMEDIATE 'CREATE ROW TABLE ${BIG}."t' || LPAD(TO_NVARCHAR(:i), 4, '0') || '" ("id" INTEGER)';
     END FOR;
   END`,
];

const WRITE = { maxRows: 10, timeoutMs: 600_000, readOnly: false } as const;
let harness: Harness;
let admin: DriverConnection;

describe.skipIf(!LIVE_URL)('catalog on SAP HANA (live)', () => {
  beforeAll(async () => {
    const parsed = parseConnectionUrl(LIVE_URL ?? '');
    admin = await new HanaDriver(parsed.target, { password: parsed.password }, { connectTimeoutMs: 10_000 }).connect();
    for (const sql of FIXTURE) await admin.execute(sql, [], WRITE);
    harness = await createHarness();
    const url = new URL(LIVE_URL ?? '');
    url.searchParams.set('currentSchema', S);
    await harness.add('hana', url.toString());
  }, 600_000);
  afterAll(async () => {
    await harness?.close();
    for (const schema of [S, BIG]) await admin?.execute(`DROP SCHEMA ${schema} CASCADE`, [], WRITE).catch(() => {});
    await admin?.close();
  }, 600_000);

  runCatalogSuite({
    harness: () => harness,
    connection: 'hana',
    schema: S,
    bigConnection: 'hana',
    bigSchema: BIG,
    routines: { order_total: 'function', refresh_totals: 'procedure' },
    rowEstimates: true,
    comments: true,
    heavySql: 'SELECT COUNT(*) FROM SYS.OBJECTS a, SYS.OBJECTS b, SYS.OBJECTS c',
    joinSql: 'SELECT o."total" FROM "orders" o JOIN "customers" c ON c."id" = o."customer_id" WHERE c."id" = 1',
    canaryRows: async () =>
      Number((await admin.execute(`SELECT COUNT(*) AS N FROM ${S}."canary"`, [], { ...WRITE, readOnly: true })).rows[0]?.N),
  });
});
