import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, DriverConnection } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import type { JsonValue } from '../../shared/schemas.js';

/** What differs between engines, as data: each engine's test file fills one of these in. */
export interface EngineFixture {
  readonly name: string;
  readonly url: string;
  /** The placeholder for the i-th parameter (1-based). */
  placeholder(i: number): string;
  /** A statement returning `n` rows with one integer column `n`. */
  series(n: number): string;
  /** A statement that runs for `seconds`, carrying `marker` in its text. */
  sleep(seconds: number, marker: string): string;
  /** Creates the types table `name` and fills one row; returns the SELECT and the expected row. */
  typesTable(name: string): { setup: string[]; select: string; expected: Record<string, JsonValue>; teardown: string };
  /** Statements whose text contains `marker` still running on the server (from a separate session). */
  runningWithMarker?(marker: string): Promise<number>;
  /** The server-side id of the session behind a connection. */
  sessionIdSql?: string;
  /** Kills a session from the server side. */
  killSession?(id: JsonValue): Promise<void>;
  /** Behaviours the engine cannot have, each with its reason. */
  readonly skip?: Partial<Record<ConformanceCase, string>>;
  cleanup?(): Promise<void>;
}

export type ConformanceCase = 'timeout-cancels-on-server' | 'server-kill-discarded' | 'readonly-refuses-write';

const marker = () => `hanactl_conf_${randomBytes(4).toString('hex')}`;

/**
 * One suite every driver runs (as hono's common.case.test.ts does for routers): connect and
 * ping, type mapping, bound parameters, the row cap on a large result, a timeout cancelled on
 * the server, a connection killed by the server discarded by the pool.
 */
export function runDriverConformance(fixture: EngineFixture): void {
  const skipReason = (c: ConformanceCase) => fixture.skip?.[c];

  describe(`driver conformance: ${fixture.name}`, () => {
    let driver: Driver;
    let conn: DriverConnection;
    const table = marker();
    const types = fixture.typesTable(table);

    beforeAll(async () => {
      const { target, password } = parseConnectionUrl(fixture.url);
      const factory = await loadDriverFactory(target.engine);
      driver = factory(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
      conn = await driver.connect();
      for (const sql of types.setup) await conn.execute(sql, [], { maxRows: 1, timeoutMs: 10_000, readOnly: false });
    });

    afterAll(async () => {
      if (conn && !conn.broken) await conn.execute(types.teardown, [], { maxRows: 1, timeoutMs: 10_000, readOnly: false }).catch(() => {});
      await conn?.close();
      await fixture.cleanup?.();
    });

    const read = (sql: string, params: JsonValue[] = [], maxRows = 100, timeoutMs = 10_000) =>
      conn.execute(sql, params as never, { maxRows, timeoutMs, readOnly: true });

    it('connects, pings and names its server version', async () => {
      await conn.ping();
      expect(await conn.serverVersion()).toMatch(/\d+\.\d+/);
      expect(conn.broken).toBe(false);
    });

    it('maps types into JSON an agent can read without loss', async () => {
      const result = await read(types.select);
      expect(result.rowCount).toBe(1);
      expect(result.rows[0]).toEqual(types.expected);
      expect(result.columns.map((c) => c.name)).toEqual(Object.keys(types.expected));
    });

    it('binds parameters and never interpolates them', async () => {
      const p1 = fixture.placeholder(1);
      const p2 = fixture.placeholder(2);
      const hostile = "x' OR '1'='1";
      const result = await read(`SELECT ${p1} AS a, ${p2} AS b`.replace(/$/, fixture.name === 'hana' ? ' FROM DUMMY' : ''), [hostile, 42]);
      expect(result.rows[0]).toEqual({ a: hostile, b: expect.anything() });
      expect(Number(result.rows[0]?.b)).toBe(42);
    });

    it('caps a 100,000-row result at maxRows and flags it truncated', async () => {
      const result = await read(fixture.series(100_000), [], 50);
      expect(result.rowCount).toBe(50);
      expect(result.truncated).toBe(true);
      const exact = await read(fixture.series(50), [], 50);
      expect(exact.truncated).toBe(false);
      expect(exact.rowCount).toBe(50);
    });

    it.skipIf(Boolean(skipReason('readonly-refuses-write')))('refuses a write inside a read call and leaves the data unchanged', async () => {
      await expect(conn.execute(`DELETE FROM ${table}`, [], { maxRows: 1, timeoutMs: 5000, readOnly: true })).rejects.toThrow();
      if (conn.broken) conn = await driver.connect();
      expect((await read(types.select)).rowCount).toBe(1);
    });

    it.skipIf(Boolean(skipReason('timeout-cancels-on-server')))(
      'stops a long statement at its timeout, on the server, within timeout + 1 s',
      async () => {
        const m = marker();
        const started = Date.now();
        await expect(conn.execute(fixture.sleep(60, m), [], { maxRows: 1, timeoutMs: 1000, readOnly: true })).rejects.toMatchObject({
          code: 'QUERY_TIMEOUT',
        });
        expect(Date.now() - started).toBeLessThan(1000 + 1000 + 1500);
        if (fixture.runningWithMarker) {
          const deadline = Date.now() + 1000;
          let running = await fixture.runningWithMarker(m);
          while (running > 0 && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 100));
            running = await fixture.runningWithMarker(m);
          }
          expect(running).toBe(0);
        }
        if (conn.broken) conn = await driver.connect();
        expect((await read(fixture.series(1))).rowCount).toBe(1);
      },
      20_000,
    );

    it.skipIf(Boolean(skipReason('server-kill-discarded')))('discards a connection the server killed; the next call succeeds', async () => {
      const pool = new Pool(() => driver.connect(), { max: 2, min: 0, idleTimeoutMillis: 60_000, acquireTimeoutMillis: 5000, maxLifetimeMillis: 3_600_000 }, fixture.name);
      try {
        const lease = await pool.acquire();
        const id = (await lease.connection.execute(fixture.sessionIdSql ?? '', [], { maxRows: 1, timeoutMs: 5000, readOnly: true })).rows[0];
        lease.release();
        await fixture.killSession?.(Object.values(id ?? {})[0] ?? null);
        await new Promise((r) => setTimeout(r, 200));
        const next = await pool.acquire();
        let failure: unknown;
        try {
          await next.connection.execute(fixture.series(1), [], { maxRows: 1, timeoutMs: 5000, readOnly: true });
        } catch (err) {
          failure = err;
        } finally {
          next.release(failure);
        }
        // Either the pool noticed on borrow, or the first call failed and destroyed it; the call after succeeds.
        const third = await pool.acquire();
        const result = await third.connection.execute(fixture.series(1), [], { maxRows: 1, timeoutMs: 5000, readOnly: true });
        third.release();
        expect(result.rowCount).toBe(1);
        expect(pool.destroyed).toBeGreaterThanOrEqual(1);
      } finally {
        await pool.end();
      }
    });
  });
}
