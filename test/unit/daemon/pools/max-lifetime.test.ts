import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { poolOptions, sleep, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('max lifetime', () => {
  it('retires a connection that outlived maxLifetimeMillis when it is released', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, maxLifetimeMillis: 40 }), 'test');
    const lease = await pool.acquire();
    await sleep(60);
    lease.release();
    expect(pool.destroyed).toBe(1);
    expect(pool.totalCount).toBe(0);
    expect(fx.wasClosed(lease.connection)).toBe(true);
    const next = await pool.acquire();
    expect(next.connection).not.toBe(lease.connection);
    next.release();
    await pool.end();
  });

  it('retires an idle connection that outlived maxLifetimeMillis when it is next borrowed', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, maxLifetimeMillis: 40 }), 'test');
    const lease = await pool.acquire();
    lease.release();
    expect(pool.idleCount).toBe(1);
    await sleep(60);
    const next = await pool.acquire();
    expect(next.connection).not.toBe(lease.connection);
    expect(fx.wasClosed(lease.connection)).toBe(true);
    expect(pool.created).toBe(2);
    expect(pool.destroyed).toBe(1);
    next.release();
    await pool.end();
  });

  it('keeps reusing a connection that is still within its lifetime', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, maxLifetimeMillis: 10_000 }), 'test');
    const first = await pool.acquire();
    first.release();
    await sleep(20);
    const second = await pool.acquire();
    expect(second.connection).toBe(first.connection);
    expect(pool.destroyed).toBe(0);
    second.release();
    await pool.end();
  });
});
