import { afterAll, describe, expect, it } from 'vitest';
import { READ, RUNAWAY, sqliteTestFile } from './fixtures.js';

/** Timeout, cancel and the host killed to stop a statement: test/drivers/sqlite.test.ts (the shared driver suite). */

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);'));
afterAll(() => fx.cleanup());

describe('a runaway statement', () => {
  it('leaves the event loop free: timers keep firing and another connection answers meanwhile', async () => {
    const runaway = await fx.connect();
    const other = await fx.connect();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    try {
      const stuck = runaway.execute(RUNAWAY, [], { ...READ, timeoutMs: 800 }).catch((e: unknown) => e);
      await new Promise((r) => setTimeout(r, 300));
      const before = ticks;
      await expect(other.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
      await new Promise((r) => setTimeout(r, 200));
      expect(ticks).toBeGreaterThan(before + 5);
      expect(ticks).toBeGreaterThan(20);
      await expect(stuck).resolves.toMatchObject({ code: 'QUERY_TIMEOUT' });
    } finally {
      clearInterval(timer);
    }
    expect(other.broken).toBe(false);
  });
});
