import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { poolOptions, READ, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('a pool at its cap', () => {
  it('serves waiting callers in the order they arrived', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const held = await pool.acquire();
    const served: number[] = [];
    const waits = [0, 1, 2, 3, 4].map((i) =>
      pool.acquire().then(async (lease) => {
        served.push(i);
        await lease.connection.execute('SELECT n FROM t', [], READ);
        // Let the next waiter's turn start only after this one finished.
        setTimeout(() => lease.release(), 2);
      }),
    );
    expect(pool.waitingCount).toBe(5);
    held.release();
    await Promise.all(waits);
    expect(served).toEqual([0, 1, 2, 3, 4]);
    expect(pool.created).toBe(1);
    await pool.end();
  });

  it('gives a released connection to the first waiter, not to a caller that arrives after the release', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const a = await pool.acquire();
    const b = await pool.acquire();
    const order: string[] = [];
    const early = pool.acquire().then((lease) => {
      order.push('early');
      return lease;
    });
    a.release();
    // A newcomer arriving right after the release must queue behind the early waiter.
    const late = pool.acquire().then((lease) => {
      order.push('late');
      return lease;
    });
    const first = await early;
    expect(order).toEqual(['early']);
    b.release();
    const second = await late;
    expect(order).toEqual(['early', 'late']);
    first.release();
    second.release();
    await pool.end();
  });
});
