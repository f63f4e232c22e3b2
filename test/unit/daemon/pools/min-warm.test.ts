import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { poolOptions, sleep, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('a pool with a minimum', () => {
  it('keeps min connections warm, and opens a replacement when one is destroyed', async () => {
    const pool = new Pool(fx.open, poolOptions({ min: 2, max: 4, idleTimeoutMillis: 50 }), 'warm test');
    try {
      await pool.warm();
      expect(pool.idleCount).toBe(2);
      expect(pool.created).toBe(2);
      // Borrowing a warm connection opens nothing new.
      const lease = await pool.acquire();
      expect(pool.created).toBe(2);
      lease.release(new Error('broken by the test'));
      // The replacement counts from the moment it starts opening; it is idle once open (a SQLite
      // host is a process, slow to start on a loaded machine).
      const deadline = Date.now() + 10_000;
      while (pool.idleCount < 2 && Date.now() < deadline) await sleep(20);
      expect(pool.destroyed).toBe(1);
      expect(pool.totalCount).toBe(2);
      expect(pool.idleCount).toBe(2);
      // Idle eviction (after 50 ms) never goes below the minimum.
      await sleep(200);
      expect(pool.idleCount).toBe(2);
    } finally {
      await pool.end();
    }
  });
});
