import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresDriver } from '../../../../daemon/engines/postgres/index.js';
import { Pool } from '../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../../../helpers/engines.js';
import { poolOptions, READ, sleep, sqliteFixture } from './fixtures.js';

const CALLERS = 50;

describe('the cap under 50 concurrent callers', () => {
  const fx = sqliteFixture();
  afterAll(() => fx.cleanup());

  it('never opens more than max SQLite connections, and every caller gets its answer', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 5 }), 'test');
    let busyPeak = 0;
    const callers = Promise.all(
      Array.from({ length: CALLERS }, async (_, i) => {
        const lease = await pool.acquire();
        busyPeak = Math.max(busyPeak, pool.inUseCount);
        try {
          const res = await lease.connection.execute('SELECT ? AS caller, count(*) AS c FROM t', [i], READ);
          await sleep(1 + (i % 3));
          return res.rows[0];
        } finally {
          lease.release();
        }
      }),
    );
    // Five opening, forty-five in line.
    expect(pool.totalCount).toBe(5);
    expect(pool.waitingCount).toBe(CALLERS - 5);
    const results = await callers;
    expect(results).toEqual(Array.from({ length: CALLERS }, (_, i) => ({ caller: i, c: 3 })));
    expect(fx.peak()).toBe(5);
    expect(busyPeak).toBeLessThanOrEqual(5);
    expect(pool.created).toBe(5);
    expect(pool.totalCount).toBe(5);
    expect(pool.waitingCount).toBe(0);
    await pool.end();
    expect(fx.openNow()).toBe(0);
  });
});

describe('the cap under 50 concurrent callers, counted by the PostgreSQL server', () => {
  let available = false;
  beforeAll(async () => {
    available = await serverAvailable('postgres');
  });

  it('never has more than max server connections open, and every caller gets its answer', async (ctx) => {
    if (!available) ctx.skip('PostgreSQL is not reachable; start it to run this test');
    const max = 4;
    const marker = `hanactl-pooltest-${randomBytes(6).toString('hex')}`;
    const target = parseConnectionUrl(`${PG_URL}?application_name=${marker}`).target;
    const driver = createPostgresDriver(target, {}, { connectTimeoutMs: 3000 });
    const pool = new Pool(() => driver.connect(), poolOptions({ max, acquireTimeoutMillis: 10_000 }), 'test');
    const monitor = new pg.Client({ connectionString: PG_URL, application_name: 'hanactl-pooltest-monitor' } as pg.ClientConfig);
    await monitor.connect();
    const countSql = 'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1';
    try {
      // Counted from outside, every few milliseconds, while the callers run.
      const outside: number[] = [];
      let running = true;
      const watching = (async () => {
        while (running) {
          outside.push((await monitor.query(countSql, [marker])).rows[0].n as number);
          await sleep(3);
        }
      })();

      const results = await Promise.all(
        Array.from({ length: CALLERS }, async (_, i) => {
          const lease = await pool.acquire();
          try {
            // Counted from inside, by each caller on the connection it holds.
            const res = await lease.connection.execute(
              'SELECT $1::int AS caller, (SELECT count(*)::int FROM pg_stat_activity WHERE application_name = $2) AS n, pg_sleep(0.005)::text AS slept',
              [i, marker],
              READ,
            );
            return res.rows[0] as { caller: number; n: number };
          } finally {
            lease.release();
          }
        }),
      );
      running = false;
      await watching;

      expect(results.map((r) => r.caller)).toEqual(Array.from({ length: CALLERS }, (_, i) => i));
      const inside = results.map((r) => r.n);
      expect(Math.max(...inside, ...outside)).toBe(max);
      expect(inside.every((n) => n >= 1 && n <= max)).toBe(true);
      expect(outside.every((n) => n <= max)).toBe(true);
      expect(pool.created).toBe(max);
      expect(pool.errors).toBe(0);

      await pool.end();
      const after = await monitor.query(countSql, [marker]);
      let left = after.rows[0].n as number;
      for (let i = 0; i < 100 && left > 0; i++) {
        await sleep(10);
        left = (await monitor.query(countSql, [marker])).rows[0].n as number;
      }
      expect(left).toBe(0);
    } finally {
      await pool.end();
      await monitor.end();
    }
  });
});
