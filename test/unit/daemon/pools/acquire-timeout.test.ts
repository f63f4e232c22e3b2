import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { HanactlError } from '../../../../shared/errors.js';
import { poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('acquire timeout', () => {
  it('rejects a caller that waited too long with POOL_EXHAUSTED and a sentence naming the cap', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2, acquireTimeoutMillis: 60 }), 'sqlite:/data/shop.db');
    const a = await pool.acquire();
    const b = await pool.acquire();
    const started = Date.now();
    const err = await pool.acquire().then(
      () => undefined,
      (e: unknown) => e,
    );
    const waited = Date.now() - started;
    expect(err).toBeInstanceOf(HanactlError);
    expect((err as HanactlError).code).toBe('POOL_EXHAUSTED');
    expect((err as HanactlError).message).toMatch(/\bAll 2 connections to sqlite:\/data\/shop\.db stayed busy for 60 ms\b/);
    expect((err as HanactlError).message).toMatch(/raise the pool size/);
    expect(waited).toBeGreaterThanOrEqual(50);
    expect(pool.waitingCount).toBe(0);
    a.release();
    b.release();
    await pool.end();
  });

  it('leaves no ghost in the queue: a connection released after a timeout goes back to idle', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, acquireTimeoutMillis: 30 }), 'test');
    const held = await pool.acquire();
    await expect(pool.acquire()).rejects.toMatchObject({ code: 'POOL_EXHAUSTED' });
    held.release();
    expect(pool.idleCount).toBe(1);
    expect(pool.inUseCount).toBe(0);
    const again = await pool.acquire();
    expect(again.connection).toBe(held.connection);
    again.release();
    await pool.end();
  });
});
