import { afterAll, describe, expect, it, vi } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { poolOptions, READ, sleep, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('idle eviction', () => {
  it('closes idle connections above min after idleTimeoutMillis and keeps min warm', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 3, min: 1, idleTimeoutMillis: 40 }), 'test');
    const leases = await Promise.all([pool.acquire(), pool.acquire(), pool.acquire()]);
    for (const lease of leases) lease.release();
    expect(pool.idleCount).toBe(3);
    await vi.waitFor(() => expect(pool.totalCount).toBe(1), { timeout: 2_000, interval: 10 });
    expect(pool.idleCount).toBe(1);
    expect(pool.destroyed).toBe(2);
    expect(fx.openNow()).toBe(1);
    // The one kept warm stays warm, and still works.
    await sleep(100);
    expect(pool.totalCount).toBe(1);
    const lease = await pool.acquire();
    await expect(lease.connection.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
    lease.release();
    await pool.end();
  });

  it('closes every idle connection when min is 0', async () => {
    const before = fx.openNow();
    const pool = new Pool(fx.open, poolOptions({ max: 2, min: 0, idleTimeoutMillis: 30 }), 'test');
    const [a, b] = await Promise.all([pool.acquire(), pool.acquire()]);
    a?.release();
    b?.release();
    await vi.waitFor(() => expect(pool.totalCount).toBe(0), { timeout: 2_000, interval: 10 });
    expect(fx.openNow()).toBe(before);
    await pool.end();
  });

  it('does not close a connection that was borrowed again before its idle time ran out', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, min: 0, idleTimeoutMillis: 50 }), 'test');
    const first = await pool.acquire();
    first.release();
    await sleep(20);
    const second = await pool.acquire();
    await sleep(80); // well past the first idle deadline, while borrowed
    expect(fx.wasClosed(second.connection)).toBe(false);
    expect(pool.destroyed).toBe(0);
    await expect(second.connection.execute('SELECT 1 AS one', [], READ)).resolves.toMatchObject({ rows: [{ one: 1 }] });
    second.release();
    await pool.end();
  });
});
