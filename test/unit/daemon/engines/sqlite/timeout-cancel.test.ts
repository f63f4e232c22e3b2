import { afterAll, describe, expect, it } from 'vitest';
import { HanactlError } from '../../../../../shared/errors.js';
import { processExists } from '../../../../helpers/processes.js';
import { READ, RUNAWAY, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);'));
afterAll(() => fx.cleanup());

describe('a runaway statement', () => {
  it('is stopped at timeoutMs with QUERY_TIMEOUT, its worker killed and the connection broken', async () => {
    const conn = await fx.connect();
    const pid = conn.pid;
    expect(processExists(pid)).toBe(true);
    const started = Date.now();
    const err = await conn.execute(RUNAWAY, [], { ...READ, timeoutMs: 500 }).catch((e: unknown) => e);
    const took = Date.now() - started;
    expect(err).toBeInstanceOf(HanactlError);
    expect(err).toMatchObject({
      code: 'QUERY_TIMEOUT',
      message:
        'The statement ran past its time limit of 500 ms and was stopped. Narrow it (WHERE, LIMIT) or ask for a longer timeout (timeoutMs).',
    });
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(2_000);
    expect(conn.broken).toBe(true);
    expect(processExists(pid)).toBe(false);
  });

  it('is stopped when its signal aborts, with QUERY_CANCELLED', async () => {
    const conn = await fx.connect();
    const pid = conn.pid;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await expect(conn.execute(RUNAWAY, [], { ...READ, timeoutMs: 30_000, signal: controller.signal })).rejects.toMatchObject({
      code: 'QUERY_CANCELLED',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(conn.broken).toBe(true);
    expect(processExists(pid)).toBe(false);
  });

  it('is not started when the signal has already aborted, and the connection stays usable', async () => {
    const conn = await fx.connect();
    await expect(conn.execute('SELECT 1', [], { ...READ, signal: AbortSignal.abort() })).rejects.toMatchObject({ code: 'QUERY_CANCELLED' });
    expect(conn.broken).toBe(false);
    await expect(conn.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
  });

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
