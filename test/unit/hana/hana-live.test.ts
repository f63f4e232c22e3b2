import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection, ExecuteOptions } from '../../../daemon/drivers/driver.js';
import { HanaDriver } from '../../../daemon/drivers/hana/hana-driver.js';
import { buildContextStatements } from '../../../daemon/drivers/hana/hana-sql.js';
import { parseConnectionUrl } from '../../../shared/connection-url.js';
import { rejection } from './helpers.js';

/**
 * Against a real SAP HANA, when HANA_TEST_URL is set:
 *   HANA_TEST_URL='hana://USER:PASSWORD@host:port/TENANT?encrypt=true' npx vitest run test/unit/hana
 */
const LIVE_URL = process.env.HANA_TEST_URL;
if (!LIVE_URL) {
  console.log(
    'Live SAP HANA tests skipped: HANA_TEST_URL is unset (set it to hana://user:password@host:port/tenant?encrypt=true to run them).',
  );
}

const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 30_000, readOnly: true };
const WRITE: ExecuteOptions = { maxRows: 100, timeoutMs: 30_000, readOnly: false };

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

  it('connects, pings and reads the server version', async () => {
    await conn.ping();
    expect(await conn.serverVersion()).toMatch(/^\d+\.\d+/);
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

  it('caps rows at maxRows and says the result was truncated', async () => {
    const result = await conn.execute('SELECT * FROM SYS.OBJECTS', [], { ...READ, maxRows: 5 });
    expect(result.rowCount).toBe(5);
    expect(result.rows).toHaveLength(5);
    expect(result.truncated).toBe(true);
  });

  it('binds parameters', async () => {
    const result = await conn.execute("SELECT COUNT(*) AS N FROM DUMMY WHERE ? = 'x' AND ? = 2", ['x', 2], READ);
    expect(result.rows).toEqual([{ N: 1 }]);
  });

  it('refuses a write inside a read-only call', async () => {
    const table = `HANACTL_RO_PROBE_${process.pid}_${Date.now()}`;
    try {
      const err = await rejection(conn.execute(`CREATE COLUMN TABLE ${table} (A INTEGER)`, [], READ));
      expect(err.code).toBe('QUERY_FAILED');
    } finally {
      await conn.execute(`DROP TABLE ${table}`, [], WRITE).catch(() => undefined);
    }
  });

  it('cancels a long query at the timeout with QUERY_TIMEOUT', async () => {
    const started = Date.now();
    const err = await rejection(
      conn.execute('SELECT COUNT(*) FROM SYS.OBJECTS A, SYS.OBJECTS B, SYS.OBJECTS C', [], { ...READ, timeoutMs: 1_500 }),
    );
    expect(err.code).toBe('QUERY_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(10_000);
    if (!conn.broken) {
      await conn.reset();
      await conn.ping();
    } else {
      await conn.close();
      conn = await driver.connect();
    }
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
});
