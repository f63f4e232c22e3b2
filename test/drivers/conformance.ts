import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Driver, DriverConnection, ExecuteOptions } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import type { JsonValue } from '../../shared/schemas.js';
import { processRunning } from '../helpers/processes.js';
import type { ConformanceCase, EngineFixture } from './engine-fixture.js';

export type { ConformanceCase, EngineFixture };

const marker = () => `hanactl_conf_${randomBytes(4).toString('hex')}`;

const TIMEOUT_MESSAGE = (ms: number) =>
  `The statement ran past its time limit of ${ms} ms and was stopped. Narrow it (WHERE, LIMIT) or ask for a longer timeout (timeoutMs).`;
const CANCEL_MESSAGE = 'The statement was cancelled before it finished and was stopped. Run it again only if its result is still wanted.';

const READ: ExecuteOptions = { maxRows: 100, timeoutMs: 10_000, readOnly: true };
const WRITE: ExecuteOptions = { ...READ, readOnly: false };

/** Resolves with the rejection of `p`, which must be a HanactlError. */
async function failure(p: Promise<unknown>): Promise<HanactlError> {
  const outcome = await p.then(
    () => new Error('expected the call to fail, and it succeeded'),
    (err: unknown) => err,
  );
  expect(outcome).toBeInstanceOf(HanactlError);
  return outcome as HanactlError;
}

/**
 * One suite every driver runs (as hono's common.case.test.ts does for routers): the contract of
 * `DriverConnection` — connect, ping, reset and close; type mapping; bound parameters; repeated
 * column names; the row cap; read calls that cannot write; committed writes; errors that keep the
 * connection; timeout and cancel stopping the statement where it runs; connections ended from
 * outside reported broken and discarded by the pool. What an engine does differently is data in
 * its fixture; a behaviour an engine cannot have is skipped with its reason.
 */
export function runDriverConformance(fixture: EngineFixture): void {
  const skipReason = (c: ConformanceCase) => fixture.skip?.[c];
  const selectRow = fixture.selectRow ?? ((list: string) => `SELECT ${list}`);
  const quote = fixture.quote ?? ((name: string) => `"${name.replaceAll('"', '""')}"`);

  describe(`driver conformance: ${fixture.name}`, () => {
    let driver: Driver;
    let conn: DriverConnection;
    const opened: DriverConnection[] = [];
    const table = marker();
    const scratch = `${table}_w`;
    const ddl = `${table}_ddl`;
    const types = fixture.typesTable(table);

    /** A new connection, closed after the suite. */
    const open = async (): Promise<DriverConnection> => {
      const c = await driver.connect();
      opened.push(c);
      return c;
    };
    /** The suite's connection, replaced when a case left it broken. */
    const usable = async (): Promise<DriverConnection> => {
      if (conn.broken) conn = await open();
      return conn;
    };
    const read = async (sql: string, params: JsonValue[] = [], maxRows = 100) =>
      (await usable()).execute(sql, params as never, { ...READ, maxRows });
    const count = async (name: string) => Number(Object.values((await read(`SELECT COUNT(*) AS c FROM ${name}`)).rows[0] ?? {})[0]);
    /**
     * Waits until nothing runs the statement carrying `m` any more, at most `ms`: no session of
     * the server runs it, and the host process of `c`, if it gave the statement up, is gone.
     * Returns how many still run.
     */
    const settled = async (m: string, c: DriverConnection, ms = 3000): Promise<number> => {
      const pid = fixture.hostProcess?.(c);
      const running = async () =>
        (fixture.statementsRunning ? await fixture.statementsRunning(m) : 0) +
        (pid !== undefined && c.broken && processRunning(pid) ? 1 : 0);
      const deadline = Date.now() + ms;
      let n = await running();
      while (n > 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        n = await running();
      }
      return n;
    };
    /** Resolves once the server runs a statement carrying `m` (at once where only the host process could tell). */
    const started = async (m: string): Promise<void> => {
      if (!fixture.statementsRunning) return;
      const deadline = Date.now() + 5000;
      while ((await fixture.statementsRunning(m)) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };

    beforeAll(async () => {
      const { target, password } = parseConnectionUrl(fixture.url);
      const factory = await loadDriverFactory(target.engine);
      driver = factory(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
      conn = await open();
      for (const sql of [...types.setup, `CREATE TABLE ${scratch} (n INTEGER)`, `INSERT INTO ${scratch} VALUES (1)`])
        await conn.execute(sql, [], { ...WRITE, maxRows: 1 });
    });

    afterAll(async () => {
      const c = await usable().catch(() => undefined);
      for (const sql of [types.teardown, `DROP TABLE ${scratch}`, `DROP TABLE ${ddl}`])
        await c?.execute(sql, [], { ...WRITE, maxRows: 1 }).catch(() => {});
      await Promise.all(opened.map((o) => o.close()));
      await fixture.cleanup?.();
    });

    it('connects, pings, resets and names its server version', async () => {
      const c = await usable();
      await expect(c.ping()).resolves.toBeUndefined();
      await expect(c.reset()).resolves.toBeUndefined();
      expect(await c.serverVersion()).toMatch(fixture.version);
      expect(c.broken).toBe(false);
    });

    it('maps types into JSON an agent can read without loss', async () => {
      const result = await read(types.select);
      expect(result.rowCount).toBe(1);
      expect(result.rows[0]).toEqual(types.expected);
      expect(result.columns.map((c) => c.name)).toEqual(Object.keys(types.expected));
    });

    it('binds parameters and never interpolates them', async () => {
      const hostile = "x' OR '1'='1";
      const result = await read(selectRow(`${fixture.placeholder(1)} AS a, ${fixture.placeholder(2)} AS b`), [hostile, 42]);
      expect(result.rows[0]).toEqual({ a: hostile, b: expect.anything() });
      expect(Number(result.rows[0]?.b)).toBe(42);
    });

    it('keeps every column when names repeat, each under a name of its own, and odd names as data', async () => {
      const result = await read(selectRow(`1 AS ${quote('a')}, 2 AS ${quote('a')}, 3 AS ${quote('a_2')}, 4 AS ${quote('__proto__')}`));
      expect(result.columns.map((c) => c.name)).toEqual(['a', 'a_3', 'a_2', '__proto__']);
      const row = result.rows[0] as Record<string, JsonValue>;
      expect([row.a, row.a_3, row.a_2].map(Number)).toEqual([1, 2, 3]);
      expect(Number(Object.getOwnPropertyDescriptor(row, '__proto__')?.value)).toBe(4);
      expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
    });

    it('caps a 100,000-row result at maxRows, flags it truncated, leaves nothing running, and stays usable', async () => {
      const m = marker();
      const result = await read(`SELECT * FROM (${fixture.series(100_000)}) ${m}`, [], 50);
      expect(result.rowCount).toBe(50);
      expect(result.rows).toHaveLength(50);
      expect(Number(result.rows[49]?.n)).toBe(50);
      expect(result.truncated).toBe(true);
      expect(conn.broken).toBe(false);
      expect(await settled(m, conn)).toBe(0);
      const exact = await read(fixture.series(50), [], 50);
      expect(exact).toMatchObject({ rowCount: 50, truncated: false });
    });

    it('returns the columns of an empty result, not truncated', async () => {
      const none = await read(`SELECT * FROM (${fixture.series(3)}) ${marker()} WHERE ${quote('n')} < 0`);
      expect(none).toMatchObject({ rowCount: 0, rows: [], truncated: false });
      expect(none.columns.map((c) => c.name)).toEqual(['n']);
    });

    it.skipIf(Boolean(skipReason('endless-result-capped')) || !fixture.endless)(
      'caps a result with no end: it stops reading at the cap, within the timeout',
      async () => {
        const result = await (await usable()).execute(fixture.endless ?? '', [], { ...READ, maxRows: 10 });
        expect(result).toMatchObject({ rowCount: 10, truncated: true });
        expect(conn.broken).toBe(false);
        expect((await read(fixture.series(1))).rowCount).toBe(1);
      },
    );

    it.skipIf(Boolean(skipReason('readonly-refuses-write')))(
      'refuses a write and DDL inside a read call, leaves the data unchanged and the connection usable',
      async () => {
        for (const sql of [`INSERT INTO ${scratch} VALUES (99)`, `UPDATE ${scratch} SET n = 2`, `DELETE FROM ${scratch}`]) {
          const err = await failure((await usable()).execute(sql, [], READ));
          if (fixture.readOnlyRefusal) expect(err).toMatchObject(fixture.readOnlyRefusal);
          expect(conn.broken).toBe(false);
        }
        const refusedDdl = await failure((await usable()).execute(`CREATE TABLE ${ddl} (x INTEGER)`, [], READ));
        if (fixture.readOnlyRefusal?.code) expect(refusedDdl.code).toBe(fixture.readOnlyRefusal.code);
        await failure(read(`SELECT COUNT(*) AS c FROM ${ddl}`));
        expect((await read(`SELECT n FROM ${scratch}`)).rows.map((r) => Number(Object.values(r)[0]))).toEqual([1]);
        expect((await read(types.select)).rowCount).toBe(1);
      },
    );

    it('commits a write call, reports the rows it changed, another session sees it, and the next read call is read-only again', async () => {
      const first = await (await usable()).execute(`INSERT INTO ${scratch} VALUES (10)`, [], WRITE);
      expect(first).toMatchObject({ columns: [], rowCount: 0, rows: [], truncated: false, affectedRows: 1 });
      await conn.execute(`INSERT INTO ${scratch} VALUES (11)`, [], WRITE);
      const other = await open();
      expect(
        Number(Object.values((await other.execute(`SELECT COUNT(*) AS c FROM ${scratch} WHERE n >= 10`, [], READ)).rows[0] ?? {})[0]),
      ).toBe(2);
      // A write call that reads returns its rows.
      expect(Number(Object.values((await conn.execute(`SELECT COUNT(*) AS c FROM ${scratch}`, [], WRITE)).rows[0] ?? {})[0])).toBe(3);
      // The next read call on the same connection is read-only again.
      await failure(conn.execute(`DELETE FROM ${scratch}`, [], READ));
      expect(await count(scratch)).toBe(3);
      expect((await conn.execute(`DELETE FROM ${scratch} WHERE n >= 10`, [], WRITE)).affectedRows).toBe(2);
      expect(await count(scratch)).toBe(1);
    });

    it('reports a failed statement as QUERY_FAILED with the engine’s codes, and the connection stays usable', async () => {
      const err = await failure(read('SELECT * FROM no_such_table_hanactl'));
      expect(err.code).toBe('QUERY_FAILED');
      if (fixture.missingTable) expect(err).toMatchObject(fixture.missingTable);
      expect(conn.broken).toBe(false);
      expect((await read(fixture.series(1))).rowCount).toBe(1);
    });

    it('runs exactly one statement per call', async () => {
      const err = await failure(read(`${selectRow('1 AS a')}; ${selectRow('2 AS b')}`));
      expect(err.code).toBe('QUERY_FAILED');
      if (fixture.twoStatements) expect(err).toMatchObject(fixture.twoStatements);
      expect((await read(fixture.series(1))).rowCount).toBe(1);
    });

    for (const mode of [
      { name: 'read', options: READ },
      { name: 'write', options: WRITE },
    ]) {
      it.skipIf(Boolean(skipReason('timeout-cancels-on-server')))(
        `stops a long statement (${mode.name} call) at its timeout where it runs, within timeout + 1 s, with QUERY_TIMEOUT`,
        async () => {
          const m = marker();
          const c = await usable();
          const begun = Date.now();
          const err = await failure(c.execute(fixture.sleep(60, m), [], { ...mode.options, maxRows: 1, timeoutMs: 1000 }));
          expect(err).toMatchObject({ code: 'QUERY_TIMEOUT', message: TIMEOUT_MESSAGE(1000) });
          expect(Date.now() - begun).toBeGreaterThanOrEqual(1000 - 50);
          expect(await settled(m, c, 1000)).toBe(0);
          // Gone where it ran by then: the timeout, the 1 s the engine may take, and room for a loaded machine.
          expect(Date.now() - begun).toBeLessThan(1000 + 1000 + 1500);
          if (fixture.stopKeepsConnection !== undefined) expect(c.broken).toBe(!fixture.stopKeepsConnection);
          expect((await read(fixture.series(1))).rowCount).toBe(1);
        },
        20_000,
      );
    }

    it.skipIf(Boolean(skipReason('signal-cancels-on-server')))(
      'stops a running statement when its signal aborts, where it runs, with QUERY_CANCELLED',
      async () => {
        const m = marker();
        const c = await usable();
        const controller = new AbortController();
        const running = failure(c.execute(fixture.sleep(60, m), [], { ...READ, maxRows: 1, timeoutMs: 30_000, signal: controller.signal }));
        await started(m);
        const aborted = Date.now();
        controller.abort();
        expect(await running).toMatchObject({ code: 'QUERY_CANCELLED', message: CANCEL_MESSAGE });
        expect(Date.now() - aborted).toBeLessThan(2000);
        expect(await settled(m, c)).toBe(0);
        if (fixture.stopKeepsConnection !== undefined) expect(c.broken).toBe(!fixture.stopKeepsConnection);
        expect((await read(fixture.series(1))).rowCount).toBe(1);
      },
      20_000,
    );

    it('does not start a statement whose signal has already aborted, and the connection stays usable', async () => {
      const c = await usable();
      const err = await failure(c.execute(fixture.series(1), [], { ...READ, signal: AbortSignal.abort() }));
      expect(err.code).toBe('QUERY_CANCELLED');
      expect(c.broken).toBe(false);
      expect((await c.execute(fixture.series(1), [], READ)).rowCount).toBe(1);
    });

    it.skipIf(Boolean(skipReason('killed-connection-broken')) || !fixture.sessionKiller)(
      'reports a connection ended from outside while idle: the next call fails, it is broken, ping and reset fail, close does not',
      async () => {
        const c = await open();
        await c.execute(fixture.series(1), [], READ);
        await (await fixture.sessionKiller!(c))();
        const err = await failure(c.execute(fixture.series(1), [], READ));
        if (fixture.lost) expect(err).toMatchObject(fixture.lost);
        expect(c.broken).toBe(true);
        await expect(c.ping()).rejects.toBeInstanceOf(HanactlError);
        await expect(c.reset()).rejects.toBeInstanceOf(HanactlError);
        await expect(c.close()).resolves.toBeUndefined();
      },
    );

    it.skipIf(Boolean(skipReason('killed-connection-broken')) || !fixture.sessionKiller)(
      'reports a connection ended from outside during a statement: the call fails, it is broken, a new one works',
      async () => {
        const m = marker();
        const c = await open();
        const kill = await fixture.sessionKiller!(c);
        const running = failure(c.execute(fixture.sleep(30, m), [], { ...READ, maxRows: 1 }));
        await started(m);
        await kill();
        const err = await running;
        if (fixture.lost) expect(err).toMatchObject(fixture.lost);
        expect(c.broken).toBe(true);
        expect((await (await open()).execute(fixture.series(1), [], READ)).rowCount).toBe(1);
      },
      20_000,
    );

    it('closes once and never throws; a closed connection is broken, leaves no process and refuses work', async () => {
      const c = await open();
      const pid = fixture.hostProcess?.(c);
      await expect(c.close()).resolves.toBeUndefined();
      expect(c.broken).toBe(true);
      if (pid !== undefined) expect(processRunning(pid)).toBe(false);
      await expect(c.close()).resolves.toBeUndefined();
      await failure(c.execute(fixture.series(1), [], READ));
    });

    it('gives a pooled connection back clean: a temporary table one call made is gone for the next call on it', async () => {
      const temp = fixture.tempTable(`${table}_tmp`);
      const pool = new Pool(
        () => driver.connect(),
        { max: 1, min: 0, idleTimeoutMillis: 60_000, acquireTimeoutMillis: 5000, maxLifetimeMillis: 3_600_000 },
        fixture.name,
      );
      const call = (sql: string, options: ExecuteOptions) => pool.use((c) => c.execute(sql, [], options));
      try {
        await call(temp.create, WRITE);
        await expect(call(`SELECT COUNT(*) AS c FROM ${temp.name}`, WRITE)).rejects.toMatchObject({ code: 'QUERY_FAILED' });
        // The same connection served both calls: it was cleaned, not replaced.
        expect(pool.created).toBe(1);
      } finally {
        await pool.end();
      }
    });

    it.skipIf(Boolean(skipReason('server-kill-discarded')) || !fixture.sessionKiller)(
      'discards a connection ended from outside; the next call succeeds',
      async () => {
        const pool = new Pool(
          () => driver.connect(),
          { max: 2, min: 0, idleTimeoutMillis: 60_000, acquireTimeoutMillis: 5000, maxLifetimeMillis: 3_600_000 },
          fixture.name,
        );
        try {
          const lease = await pool.acquire();
          const kill = await fixture.sessionKiller!(lease.connection);
          lease.release();
          await kill();
          const next = await pool.acquire();
          let lost: unknown;
          try {
            await next.connection.execute(fixture.series(1), [], READ);
          } catch (err) {
            lost = err;
          } finally {
            next.release(lost);
          }
          // Either the pool noticed on borrow, or the first call failed and destroyed it; the call after succeeds.
          const third = await pool.acquire();
          const result = await third.connection.execute(fixture.series(1), [], READ);
          third.release();
          expect(result.rowCount).toBe(1);
          expect(pool.destroyed).toBeGreaterThanOrEqual(1);
        } finally {
          await pool.end();
        }
      },
    );
  });
}
