import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('double release', () => {
  it('throws on the second release and leaves the pool as the first release left it', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const lease = await pool.acquire();
    lease.release();
    expect(() => lease.release()).toThrow(/already released/);
    expect(pool.idleCount).toBe(1);
    expect(pool.totalCount).toBe(1);
    expect(pool.inUseCount).toBe(0);
    await pool.end();
  });

  it('does not let a stale lease release a connection that someone else now holds', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const first = await pool.acquire();
    first.release();
    const second = await pool.acquire();
    expect(second.connection).toBe(first.connection);
    expect(() => first.release()).toThrow(/already released/);
    expect(pool.inUseCount).toBe(1);
    expect(pool.idleCount).toBe(0);
    second.release();
    await pool.end();
  });

  it('throws on a second release after an error release too', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const lease = await pool.acquire();
    lease.release(new Error('boom'));
    expect(() => lease.release()).toThrow(/already released/);
    expect(pool.destroyed).toBe(1);
    await pool.end();
  });
});
