import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteDriver } from '../../../../daemon/engines/sqlite/index.js';
import { Pool } from '../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { CONNECT_TIMEOUT_MS, poolOptions, READ, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

/** A real driver for a file that does not exist: every open fails with CONNECT_FAILED. */
const missing = createSqliteDriver(
  parseConnectionUrl(`sqlite:${join(fx.dir, 'missing.db')}`).target,
  {},
  { connectTimeoutMs: CONNECT_TIMEOUT_MS },
);

describe('a failed open', () => {
  it('reaches the caller as CONNECT_FAILED and frees its place in the pool', async () => {
    const pool = new Pool(() => missing.connect(), poolOptions({ max: 1 }), 'test');
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'CONNECT_FAILED', message: expect.stringContaining('does not exist') });
    expect(pool.totalCount).toBe(0);
    expect(pool.errors).toBe(1);
    await pool.end();
  });

  it('lets a caller queued behind it open its own connection at once, rather than wait out the acquire timeout', async () => {
    let calls = 0;
    const open = () => (calls++ === 0 ? missing.connect() : fx.open());
    const pool = new Pool(open, poolOptions({ max: 1, acquireTimeoutMillis: 8_000 }), 'test');
    const first = pool.acquire();
    const second = pool.acquire(); // queued: the first caller's open holds the only place
    expect(pool.waitingCount).toBe(1);
    await expect(first).rejects.toMatchObject({ code: 'CONNECT_FAILED' });
    const lease = await second; // with the old bug: POOL_EXHAUSTED after 8 s
    await expect(lease.connection.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
    lease.release();
    await pool.end();
  });

  it('gives every queued caller its own CONNECT_FAILED when the database stays unreachable, not POOL_EXHAUSTED', async () => {
    const pool = new Pool(() => missing.connect(), poolOptions({ max: 1, acquireTimeoutMillis: 8_000 }), 'test');
    const outcomes = await Promise.allSettled([pool.acquire(), pool.acquire(), pool.acquire()]);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ code: 'CONNECT_FAILED' });
    }
    expect(pool.errors).toBe(3);
    expect(pool.totalCount).toBe(0);
    expect(pool.waitingCount).toBe(0);
    await pool.end();
  });
});
