import { afterAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../daemon/engines/driver.js';
import { statementTimedOut } from '../../../../daemon/engines/stop-errors.js';
import { asCheckOwner } from '../../../../daemon/policy/check-owner.js';
import { Pool } from '../../../../daemon/pools/pool.js';
import { hold, poolOptions, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

/**
 * Connections whose close resolves only once `serverGone()` is called: a server session that
 * runs on after the call gave it up (a statement past its timeout the server cannot interrupt).
 */
function lingering() {
  let serverGone!: () => void;
  const gone = new Promise<void>((r) => {
    serverGone = r;
  });
  let closing = 0;
  const open = async (): Promise<DriverConnection> => {
    const connection = await fx.open();
    const close = connection.close.bind(connection);
    connection.close = async () => {
      closing++;
      await gone;
      await close();
    };
    return connection;
  };
  return { open, serverGone, closing: () => closing };
}

/** A call of `session` that gives its connection up with a timeout, as a driver does past its grace. */
const timedOut = (pool: Pool, session: string) =>
  asCheckOwner(session, () =>
    pool.use(async () => {
      throw statementTimedOut(1000);
    }),
  );

describe('a connection given up while its server session runs on', () => {
  it('counts against the pool until its close resolves, and the pool opens no more than its size', async () => {
    const l = lingering();
    const pool = new Pool(l.open, poolOptions({ max: 2, acquireTimeoutMillis: 300 }), 'test');
    await expect(timedOut(pool, 'a')).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    expect(l.closing()).toBe(1);
    expect(pool.endingCount).toBe(1);
    expect(pool.totalCount).toBe(0);

    const other = hold(pool, 'b');
    await other.holding;
    // Two server sessions exist (one ending, one in use): a third session's call waits, then is refused naming why.
    const third = hold(pool, 'c');
    await expect(third.done).rejects.toMatchObject({ code: 'POOL_EXHAUSTED', message: expect.stringContaining('1 still ending') });
    expect(pool.created).toBe(2);

    const fourth = hold(pool, 'c');
    l.serverGone();
    // Served by the place the ending connection frees, while the other call still holds its own.
    await fourth.holding;
    expect(pool.endingCount).toBe(0);
    expect(pool.created).toBe(3);
    other.finish();
    fourth.finish();
    await Promise.all([other.done, fourth.done]);
    await pool.end();
  });

  it("keeps the calling session's place until the server session is gone", async () => {
    const l = lingering();
    const pool = new Pool(l.open, poolOptions({ max: 2, acquireTimeoutMillis: 300 }), 'test');
    await expect(timedOut(pool, 'a')).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });

    // The session's share (1 of 2) is the ending connection: its next call is refused naming that.
    const refused = hold(pool, 'a');
    await expect(refused.done).rejects.toMatchObject({
      code: 'TOO_MANY_CALLS',
      message: expect.stringContaining('still ending on the server'),
    });
    // Another session is served meanwhile.
    const other = hold(pool, 'b');
    await other.holding;
    other.finish();
    await other.done;

    const next = hold(pool, 'a');
    l.serverGone();
    await next.holding;
    next.finish();
    await next.done;
    await pool.end();
  });

  it('a session cannot stack given-up connections beyond its share', async () => {
    const l = lingering();
    const pool = new Pool(l.open, poolOptions({ max: 4, acquireTimeoutMillis: 300 }), 'test');
    await expect(timedOut(pool, 'a')).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    await expect(timedOut(pool, 'a')).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    await expect(timedOut(pool, 'a')).rejects.toMatchObject({ code: 'TOO_MANY_CALLS' });
    expect(pool.endingCount).toBe(2);
    expect(pool.created).toBe(2);
    l.serverGone();
    await expect.poll(() => pool.endingCount).toBe(0);
    await pool.end();
  });
});
