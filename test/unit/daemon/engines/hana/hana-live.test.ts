import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogExecutor } from '../../../../../daemon/catalog/catalog.js';
import type { DriverConnection, ExecuteOptions } from '../../../../../daemon/engines/driver.js';
import { HanaCatalog } from '../../../../../daemon/engines/hana/hana-catalog.js';
import { HanaDriver } from '../../../../../daemon/engines/hana/hana-driver.js';
import { buildContextStatements } from '../../../../../daemon/engines/hana/hana-sql.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { rejection } from './helpers.js';

/**
 * Against a real SAP HANA, when HANA_TEST_URL is set (docs/engines/hana.md says how to get one):
 *   HANA_TEST_URL='hana://USER:PASSWORD@<id>.hana.<region>.hanacloud.ondemand.com:443' npm run test:hana
 */
const LIVE_URL = process.env.HANA_TEST_URL;
if (!LIVE_URL) {
  console.log(
    'Live SAP HANA tests SKIPPED: HANA_TEST_URL is unset (set it to hana://user:password@host:443 and run npm run test:hana; see docs/engines/hana.md).',
  );
}

const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 30_000, readOnly: true };
const WRITE: ExecuteOptions = { maxRows: 100, timeoutMs: 30_000, readOnly: false };

/** What every driver does (connect, types, binds, row cap, read-only calls, timeout, cancel) is the shared suite: test/drivers/hana.test.ts. */
describe.skipIf(!LIVE_URL)('live SAP HANA', () => {
  const parsed = LIVE_URL ? parseConnectionUrl(LIVE_URL) : undefined;
  let driver: HanaDriver;
  let conn: DriverConnection;

  beforeAll(async () => {
    if (!parsed) return;
    driver = new HanaDriver(parsed.target, { password: parsed.password }, { connectTimeoutMs: 10_000 });
    conn = await driver.connect();
  });

  afterAll(async () => {
    await conn?.close();
  });

  it('selects typed values from DUMMY without loss', async () => {
    const result = await conn.execute(
      `SELECT CAST(42 AS INTEGER) AS I,
              CAST('12345678901234567890.12' AS DECIMAL(38,2)) AS D,
              CAST('9007199254740993' AS BIGINT) AS BIG,
              N'h\u00e9llo' AS S,
              HEXTOBIN('DEADBEEF') AS B,
              CAST(NULL AS NVARCHAR(10)) AS N
         FROM DUMMY`,
      [],
      READ,
    );
    expect(result.rows).toEqual([
      { I: 42, D: '12345678901234567890.12', BIG: '9007199254740993', S: 'h\u00e9llo', B: '\\xdeadbeef', N: null },
    ]);
    expect(result.columns.map((c) => c.type)).toEqual(['INTEGER', 'DECIMAL', 'BIGINT', 'NVARCHAR', 'VARBINARY', 'NVARCHAR']);
  });

  it('lets a statement run longer than the connect timeout', async () => {
    if (!parsed) return;
    const quick = new HanaDriver(parsed.target, { password: parsed.password }, { connectTimeoutMs: 3_000 });
    const c = await quick.connect();
    try {
      await c.execute('DO BEGIN USING SQLSCRIPT_SYNC AS SYNC; CALL SYNC:SLEEP_SECONDS(5); END', [], { ...WRITE, timeoutMs: 20_000 });
    } finally {
      await c.close();
    }
  });

  it('sets and clears context parameters with bound values', async () => {
    const read = async () => (await conn.execute("SELECT SESSION_CONTEXT('HANACTL_TEST') AS V FROM DUMMY", [], READ)).rows[0]?.V;
    for (const sql of buildContextStatements(['HANACTL_TEST'], { HANACTL_TEST: "it's 42" })) await conn.execute(sql, [], WRITE);
    expect(await read()).toBe("it's 42");
    for (const sql of buildContextStatements(['HANACTL_TEST'], {})) await conn.execute(sql, [], WRITE);
    expect(await read()).toBeNull();
  });

  it('reports a wrong password as CONNECT_FAILED without echoing it', async () => {
    if (!parsed) return;
    const wrong = 'Wr0ng-pl4nted-password';
    const bad = new HanaDriver(parsed.target, { password: wrong }, { connectTimeoutMs: 10_000 });
    const err = await rejection(bad.connect());
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).not.toContain(wrong);
  });

  /** A statement HANA cannot answer without doing the work: it sleeps on the server. */
  const SLEEP = (seconds: number) => `DO BEGIN USING SQLSCRIPT_SYNC AS SYNC; CALL SYNC:SLEEP_SECONDS(${seconds}); END`;

  it('authenticates with encryption on port 443 (SAP HANA Cloud)', async () => {
    if (parsed?.target.port !== 443) return;
    expect(driver.connectOptions.encrypt).toBe(true);
    const rows = (await conn.execute("SELECT SESSION_CONTEXT('PROTOCOL_VERSION') AS P FROM DUMMY", [], READ)).rows;
    expect(rows).toHaveLength(1);
  });

  it('refuses DDL inside a read-only call', async () => {
    const err = await rejection(conn.execute(`CREATE ROW TABLE HANACTL_DDL_${process.pid} (A INT)`, [], READ));
    expect(err.code).toBe('QUERY_FAILED');
  });

  it('sets context values inside a read-only call, reads them back, and clears them when the call ends', async () => {
    const value = "o'brien; -- \\ ' || 'x";
    const set = await conn.execute("SELECT SESSION_CONTEXT('HANACTL_CUSTOMER') AS V FROM DUMMY", [], {
      ...READ,
      context: { HANACTL_CUSTOMER: value },
    });
    expect(set.rows).toEqual([{ V: value }]);
    const after = await conn.execute("SELECT SESSION_CONTEXT('HANACTL_CUSTOMER') AS V FROM DUMMY", [], READ);
    expect(after.rows).toEqual([{ V: null }]);
    expect(conn.dirty).toBe(false);
  });

  it('runs every catalog tool and explain', async () => {
    const catalog = new HanaCatalog();
    const run =
      (readOnly: boolean): CatalogExecutor =>
      async (sql, params, maxRows) =>
        (await conn.execute(sql, params, { maxRows, timeoutMs: 30_000, readOnly })).rows;
    const schema = await catalog.currentSchema(run(true));
    expect(typeof schema).toBe('string');
    expect((await catalog.listSchemas(run(true), { limit: 20 })).schemas.length).toBeGreaterThanOrEqual(0);
    await catalog.listTables(run(true), { schema: schema ?? 'SYS', limit: 20 });
    const [dummy] = await catalog.findTables(run(true), 'SYS', 'DUMMY');
    if (dummy) expect((await catalog.describeTable(run(true), dummy)).columns.length).toBeGreaterThan(0);
    await catalog.listRoutines(run(true), { schema: schema ?? 'SYS', limit: 20 });
    await catalog.search(run(true), { pattern: 'dummy', kinds: ['table', 'view', 'column', 'routine'], limit: 10 });
    const plan = await catalog.explain(run(false), 'SELECT * FROM DUMMY');
    expect(plan.text).toMatch(/\S/);
  });

  it('plans a guarded read with its binds: a cheap one runs, a cross join over the limit is refused unrun', async () => {
    const guard = (maxCost: number) => ({
      maxCost,
      over: (estimate: number) => Object.assign(new Error(`over: ${estimate}`), { estimate }),
      unavailable: (reason: string) => new Error(reason),
    });
    const cheap = await conn.execute('SELECT DUMMY FROM DUMMY WHERE 1 = ?', [1], { ...READ, costGuard: guard(1e9) });
    expect(cheap.rows).toEqual([{ DUMMY: 'X' }]);
    const err = await conn
      .execute('SELECT COUNT(*) FROM SYS.OBJECTS A, SYS.OBJECTS B WHERE A.OBJECT_OID > ?', [0], { ...READ, costGuard: guard(0.000001) })
      .catch((e: unknown) => e as Error & { estimate?: number });
    expect((err as { estimate?: number }).estimate).toBeGreaterThan(0.000001);
    const left = await conn.execute("SELECT COUNT(*) AS N FROM EXPLAIN_PLAN_TABLE WHERE STATEMENT_NAME LIKE 'HANACTL_COST_%'", [], READ);
    expect(Number(left.rows[0]?.N)).toBe(0);
  });

  it('times out a statement HANA cannot optimise away, and the session stays usable', async () => {
    const started = Date.now();
    const err = await rejection(conn.execute(SLEEP(30), [], { ...WRITE, timeoutMs: 1_500 }));
    expect(err.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(10_000);
    if (conn.broken) conn = await driver.connect();
    await conn.ping();
  });

  it('aborts a running statement on the signal', async () => {
    const controller = new AbortController();
    const running = rejection(conn.execute(SLEEP(30), [], { ...WRITE, timeoutMs: 60_000, signal: controller.signal }));
    setTimeout(() => controller.abort(), 1_000);
    expect((await running).code).toBe('QUERY_CANCELLED');
    if (conn.broken) conn = await driver.connect();
    await conn.ping();
  });

  it('cancels under load: ten long statements at once all stop at their deadline', async () => {
    if (!parsed) return;
    const many = await Promise.all(Array.from({ length: 10 }, () => driver.connect()));
    try {
      const started = Date.now();
      const results = await Promise.all(many.map((c) => rejection(c.execute(SLEEP(60), [], { ...WRITE, timeoutMs: 3_000 }))));
      expect(results.map((e) => e.code)).toEqual(Array(10).fill('QUERY_TIMEOUT'));
      // Each was cancelled on the server: none waited for its 60 s sleep (nor was given up after the grace period).
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(many.filter((c) => c.broken)).toHaveLength(0);
    } finally {
      await Promise.all(many.map((c) => c.close()));
    }
  }, 60_000);
});
