import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { HanactlError } from '../../../../shared/errors.js';
import { poolOptions, READ, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('release with an error', () => {
  it('destroys the connection instead of reusing it', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const lease = await pool.acquire();
    const failure = await lease.connection.execute('SELECT * FROM no_such_table', [], READ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(HanactlError);
    lease.release(failure);
    expect(pool.destroyed).toBe(1);
    expect(pool.errors).toBe(1);
    expect(pool.idleCount).toBe(0);
    expect(pool.totalCount).toBe(0);
    expect(fx.wasClosed(lease.connection)).toBe(true);
    expect(fx.openNow()).toBe(0);

    const next = await pool.acquire();
    expect(next.connection).not.toBe(lease.connection);
    await expect(next.connection.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
    next.release();
    expect(pool.created).toBe(2);
    await pool.end();
  });

  it('recycles a connection released without an error', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const lease = await pool.acquire();
    lease.release();
    expect(pool.destroyed).toBe(0);
    expect(pool.idleCount).toBe(1);
    const next = await pool.acquire();
    expect(next.connection).toBe(lease.connection);
    next.release();
    await pool.end();
  });

  it('hands a waiter a fresh connection when the one it waited for was released with an error', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const lease = await pool.acquire();
    const waiting = pool.acquire();
    lease.release(new Error('statement blew up'));
    const next = await waiting;
    expect(next.connection).not.toBe(lease.connection);
    expect(fx.wasClosed(next.connection)).toBe(false);
    expect(pool.totalCount).toBe(1);
    next.release();
    await pool.end();
  });
});
