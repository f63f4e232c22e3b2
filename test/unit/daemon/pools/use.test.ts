import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../daemon/engines/driver.js';
import { Pool, type PoolOptions } from '../../../../daemon/pools/pool.js';
import { HanactlError } from '../../../../shared/errors.js';
import { poolOptions, READ, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
const pools: Pool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});
afterAll(() => fx.cleanup());

const newPool = (overrides: Partial<PoolOptions>, open: () => Promise<DriverConnection> = fx.open): Pool => {
  const pool = new Pool(open, poolOptions(overrides), 'sqlite:/data/shop.db');
  pools.push(pool);
  return pool;
};

/** A promise's outcome: its value, or the error it rejected with. */
const outcome = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    (v) => v,
    (e: unknown) => e,
  );

describe('pool.use: borrow, run, give back', () => {
  it('gives fn a connection and returns its answer; the connection goes back idle', async () => {
    const pool = newPool({ max: 2 });
    let used: DriverConnection | undefined;
    const result = await pool.use(async (c) => {
      used = c;
      return c.execute('SELECT count(*) AS c FROM t', [], READ);
    });
    expect(result).toMatchObject({ rows: [{ c: 3 }] });
    expect(pool).toMatchObject({ idleCount: 1, inUseCount: 0, destroyed: 0 });
    await pool.use(async (c) => expect(c).toBe(used));
  });

  it('keeps the connection after a statement error, which reaches the caller as it came', async () => {
    const pool = newPool({ max: 1 });
    let used: DriverConnection | undefined;
    const err = await outcome(
      pool.use((c) => {
        used = c;
        return c.execute('SELECT * FROM no_such_table', [], READ);
      }),
    );
    expect(err).toMatchObject({ code: 'QUERY_FAILED', message: expect.stringMatching(/no_such_table/) });
    expect(pool).toMatchObject({ idleCount: 1, destroyed: 0, errors: 0 });
    expect(fx.wasClosed(used as DriverConnection)).toBe(false);
    await pool.use(async (c) => expect(c).toBe(used));
  });

  it('keeps the connection after a refusal', async () => {
    const pool = newPool({ max: 1 });
    const refusal = new HanactlError('STATEMENT_REFUSED', 'Refused by the cost guard.');
    await expect(pool.use(() => Promise.reject(refusal))).rejects.toBe(refusal);
    expect(pool).toMatchObject({ idleCount: 1, destroyed: 0 });
  });

  it('destroys the connection after any other failure, which reaches the caller as it came', async () => {
    const pool = newPool({ max: 1 });
    let used: DriverConnection | undefined;
    const lost = new HanactlError('CONNECT_FAILED', 'The connection was lost.');
    await expect(
      pool.use(async (c) => {
        used = c;
        throw lost;
      }),
    ).rejects.toBe(lost);
    expect(pool).toMatchObject({ idleCount: 0, totalCount: 0, destroyed: 1, errors: 1 });
    expect(fx.wasClosed(used as DriverConnection)).toBe(true);
    const bug = new TypeError('x is undefined');
    await expect(pool.use(() => Promise.reject(bug))).rejects.toBe(bug);
    expect(pool.destroyed).toBe(2);
    // The pool still serves, on a new connection.
    await expect(pool.use((c) => c.execute('SELECT 1 AS one', [], READ))).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });
});

describe('pool.use: a cancelled caller stops waiting for a connection', () => {
  it('leaves the line with the signal’s own error when the pool is at its cap; fn never runs', async () => {
    const pool = newPool({ max: 1, acquireTimeoutMillis: 60_000 });
    const held = await pool.acquire();
    const controller = new AbortController();
    let ran = false;
    const waiting = outcome(
      pool.use(async () => {
        ran = true;
      }, controller.signal),
    );
    expect(pool.waitingCount).toBe(1);
    const reason = new HanactlError('QUERY_CANCELLED', 'Cancelled by a person.');
    controller.abort(reason);
    expect(await waiting).toBe(reason);
    expect(ran).toBe(false);
    expect(pool.waitingCount).toBe(0);
    // The held connection, given back, idles: no ghost waiter took it.
    held.release();
    expect(pool).toMatchObject({ idleCount: 1, inUseCount: 0 });
  });

  it('says QUERY_CANCELLED, nothing ran, when the signal carries no hanactl error', async () => {
    const pool = newPool({ max: 1, acquireTimeoutMillis: 60_000 });
    const held = await pool.acquire();
    const controller = new AbortController();
    const waiting = outcome(pool.use(async () => 'ran', controller.signal));
    controller.abort();
    expect(await waiting).toMatchObject({
      code: 'QUERY_CANCELLED',
      message: 'The call was cancelled while it waited for a connection; nothing ran.',
    });
    held.release();
  });

  it('refuses at once, opening nothing, when the signal was aborted before the borrow', async () => {
    const pool = newPool({ max: 1 });
    const controller = new AbortController();
    controller.abort();
    await expect(pool.use(async () => 'ran', controller.signal)).rejects.toMatchObject({ code: 'QUERY_CANCELLED' });
    expect(pool).toMatchObject({ created: 0, totalCount: 0 });
  });

  it('stops waiting while a connection opens; the connection, once open, idles for the next caller', async () => {
    let opened!: () => void;
    const gate = new Promise<void>((r) => (opened = r));
    const pool = newPool({ max: 1 }, async () => {
      await gate;
      return fx.open();
    });
    const controller = new AbortController();
    const waiting = outcome(pool.use(async () => 'ran', controller.signal));
    expect(pool.totalCount).toBe(1); // the one being opened
    controller.abort();
    expect(await waiting).toMatchObject({ code: 'QUERY_CANCELLED' });
    opened();
    await expect.poll(() => pool.idleCount).toBe(1);
    expect(pool).toMatchObject({ inUseCount: 0, created: 1, destroyed: 0 });
    await expect(pool.use((c) => c.execute('SELECT 1 AS one', [], READ))).resolves.toMatchObject({ rows: [{ one: 1 }] });
    expect(pool.created).toBe(1);
  });
});
