import { afterAll, describe, expect, it } from 'vitest';
import { Pool } from '../../../../daemon/pools/pool.js';
import { HanactlError } from '../../../../shared/errors.js';
import { poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

async function rejection(promise: Promise<unknown>): Promise<HanactlError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HanactlError);
  return err as HanactlError;
}

describe('end()', () => {
  it('rejects every waiting caller with SHUTTING_DOWN', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1, acquireTimeoutMillis: 10_000 }), 'test');
    const held = await pool.acquire();
    const waiters = [pool.acquire(), pool.acquire(), pool.acquire()].map(rejection);
    expect(pool.waitingCount).toBe(3);
    const started = Date.now();
    await pool.end();
    const errors = await Promise.all(waiters);
    expect(Date.now() - started).toBeLessThan(1_000); // not left to their 10 s timeout
    for (const err of errors) {
      expect(err.code).toBe('SHUTTING_DOWN');
      expect(err.message).toMatch(/shutting down/);
    }
    expect(pool.waitingCount).toBe(0);
    held.release();
  });

  it('rejects a caller arriving after end with SHUTTING_DOWN, without opening a connection', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    await pool.end();
    const opened = fx.opened.length;
    const err = await rejection(pool.acquire());
    expect(err.code).toBe('SHUTTING_DOWN');
    expect(fx.opened.length).toBe(opened);
  });

  it('closes idle connections at once and busy ones when they come back', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const idle = await pool.acquire();
    const busy = await pool.acquire();
    idle.release();
    await pool.end();
    expect(fx.wasClosed(idle.connection)).toBe(true);
    expect(fx.wasClosed(busy.connection)).toBe(false);
    expect(pool.idleCount).toBe(0);
    busy.release();
    expect(fx.wasClosed(busy.connection)).toBe(true);
    expect(pool.totalCount).toBe(0);
    expect(pool.destroyed).toBe(2);
    expect(fx.openNow()).toBe(0);
  });
});
