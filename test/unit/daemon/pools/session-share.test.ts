import { afterAll, describe, expect, it } from 'vitest';
import { Pool, perSessionShare } from '../../../../daemon/pools/pool.js';
import { hold, poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe("one session's share of a pool", () => {
  it.each([
    [1, 1],
    [2, 1],
    [3, 1],
    [4, 2],
    [10, 5],
  ])('a pool of %i lets one session hold %i', (max, share) => {
    expect(perSessionShare(max)).toBe(share);
    expect(new Pool(fx.open, poolOptions({ max }), 'test').perSession).toBe(share);
  });

  it.each([2, 3, 4, 10])('in a pool of %i a session flooding it leaves a connection for another session', async (max) => {
    const pool = new Pool(fx.open, poolOptions({ max }), 'test');
    const flood = Array.from({ length: max + 2 }, () => hold(pool, 'a'));
    await Promise.all(flood.slice(0, perSessionShare(max)).map((c) => c.holding));
    expect(pool.inUseCount).toBe(perSessionShare(max));
    const other = hold(pool, 'b');
    await other.holding;
    other.finish();
    await other.done;
    // The session's waiting calls run as its own finish, in order.
    for (const c of flood) {
      await c.holding;
      expect(pool.inUseCount).toBeLessThanOrEqual(perSessionShare(max));
      c.finish();
    }
    await Promise.all(flood.map((c) => c.done));
    await pool.end();
  });

  it('in a pool of 1 sessions take turns: the other session is served before this one runs again', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const first = hold(pool, 'a');
    const second = hold(pool, 'a');
    await first.holding;
    const other = hold(pool, 'b');
    const order: string[] = [];
    void other.holding.then(() => order.push('b'));
    void second.holding.then(() => order.push('a'));
    first.finish();
    await other.holding;
    expect(order).toEqual(['b']);
    other.finish();
    await second.holding;
    expect(order).toEqual(['b', 'a']);
    second.finish();
    await Promise.all([first.done, second.done, other.done]);
    await pool.end();
  });

  it("a call waiting beyond the session's share past the acquire timeout is refused naming the share", async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2, acquireTimeoutMillis: 200 }), 'test');
    const held = hold(pool, 'a');
    await held.holding;
    const extra = hold(pool, 'a');
    await expect(extra.done).rejects.toMatchObject({ code: 'TOO_MANY_CALLS', message: expect.stringContaining('1 of the 2 connections') });
    held.finish();
    await held.done;
    await pool.end();
  });

  it('calls of no session take no share', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const leases: (() => void)[] = [];
    const uses = [0, 1].map(() => pool.use(() => new Promise<void>((r) => leases.push(r))));
    await expect.poll(() => pool.inUseCount).toBe(2);
    for (const r of leases) r();
    await Promise.all(uses);
    await pool.end();
  });
});
