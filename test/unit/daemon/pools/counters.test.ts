import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteDriver } from '../../../../daemon/engines/sqlite/index.js';
import { Pool } from '../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { CONNECT_TIMEOUT_MS, poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

function counters(pool: Pool) {
  const { created, destroyed, errors, totalCount, idleCount, inUseCount, waitingCount } = pool;
  return { created, destroyed, errors, totalCount, idleCount, inUseCount, waitingCount };
}

describe('pool counters', () => {
  it('start at zero', () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    expect(counters(pool)).toEqual({ created: 0, destroyed: 0, errors: 0, totalCount: 0, idleCount: 0, inUseCount: 0, waitingCount: 0 });
  });

  it('track borrowing, waiting, releasing and destroying', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const a = await pool.acquire();
    const b = await pool.acquire();
    const waiting = pool.acquire();
    expect(counters(pool)).toEqual({ created: 2, destroyed: 0, errors: 0, totalCount: 2, idleCount: 0, inUseCount: 2, waitingCount: 1 });

    a.release();
    const c = await waiting;
    expect(c.connection).toBe(a.connection);
    expect(counters(pool)).toEqual({ created: 2, destroyed: 0, errors: 0, totalCount: 2, idleCount: 0, inUseCount: 2, waitingCount: 0 });

    b.release();
    expect(counters(pool)).toEqual({ created: 2, destroyed: 0, errors: 0, totalCount: 2, idleCount: 1, inUseCount: 1, waitingCount: 0 });

    c.release(new Error('statement failed'));
    expect(counters(pool)).toEqual({ created: 2, destroyed: 1, errors: 1, totalCount: 1, idleCount: 1, inUseCount: 0, waitingCount: 0 });

    await pool.end();
    expect(counters(pool)).toEqual({ created: 2, destroyed: 2, errors: 1, totalCount: 0, idleCount: 0, inUseCount: 0, waitingCount: 0 });
  });

  it('count a connection being opened in totalCount, and a failed open as an error that frees its place', async () => {
    const missing = createSqliteDriver(
      parseConnectionUrl(`sqlite:${fx.dir}/missing.db`).target,
      {},
      { connectTimeoutMs: CONNECT_TIMEOUT_MS },
    );
    const pool = new Pool(() => missing.connect(), poolOptions({ max: 1 }), 'test');
    const attempt = pool.acquire();
    expect(pool.totalCount).toBe(1);
    await expect(attempt).rejects.toMatchObject({ code: 'CONNECT_FAILED' });
    expect(counters(pool)).toEqual({ created: 0, destroyed: 0, errors: 1, totalCount: 0, idleCount: 0, inUseCount: 0, waitingCount: 0 });
    // The place is free again: the next caller tries to open rather than queue.
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'CONNECT_FAILED' });
    expect(pool.errors).toBe(2);
  });
});
