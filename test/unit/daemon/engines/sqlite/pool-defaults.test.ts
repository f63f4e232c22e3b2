import { afterAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../../../../daemon/engines/index.js';
import { createSqliteDriver } from '../../../../../daemon/engines/sqlite/index.js';
import { DEFAULT_POOL_OPTIONS } from '../../../../../daemon/pools/pool.js';
import { PoolManager } from '../../../../../daemon/pools/pool-manager.js';
import { makeRecord } from '../../../../../daemon/registry/connection-record.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { processRunning } from '../../../../helpers/processes.js';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);'));
afterAll(() => fx.cleanup());

const record = (name: string) =>
  makeRecord(
    { name, target: parseConnectionUrl(`sqlite:${fx.file}`).target, allowWrite: false, context: [], createdAt: new Date(0).toISOString() },
    undefined,
  );

function manager(chosen: { max?: number; idleTimeoutMillis?: number } = {}): PoolManager {
  return new PoolManager({
    pool: { ...DEFAULT_POOL_OPTIONS, ...chosen },
    chosenPool: chosen,
    connectTimeoutMs: 5_000,
    maxPools: 4,
    loadDriverFactory,
  });
}

describe('SQLite pool defaults', () => {
  it('are fewer hosts than a server engine gets, that exit sooner when idle', async () => {
    const pools = manager();
    try {
      const { pool } = await pools.poolFor(record('lite'));
      expect(pool.options.max).toBe(4);
      expect(pool.options.max).toBeLessThan(DEFAULT_POOL_OPTIONS.max);
      expect(pool.options.idleTimeoutMillis).toBe(30_000);
      expect(pool.options.min).toBe(0);
    } finally {
      await pools.closeAll();
    }
  });

  it('yield to what a person chose in config.json', async () => {
    const pools = manager({ max: 7, idleTimeoutMillis: 90_000 });
    try {
      const { pool } = await pools.poolFor(record('lite'));
      expect(pool.options).toMatchObject({ max: 7, idleTimeoutMillis: 90_000 });
    } finally {
      await pools.closeAll();
    }
  });

  it('an idle host exits after the idle timeout, and a later call starts another', async () => {
    const pools = manager({ idleTimeoutMillis: 1_000 });
    try {
      const { pool } = await pools.poolFor(record('lite'));
      const lease = await pool.acquire();
      const pid = (lease.connection as { pid?: number }).pid as number;
      await expect(lease.connection.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
      lease.release();
      expect(processRunning(pid)).toBe(true);
      const deadline = Date.now() + 10_000;
      while (processRunning(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(processRunning(pid)).toBe(false);
      expect(pool.totalCount).toBe(0);
      const again = await pool.acquire();
      await expect(again.connection.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
      again.release();
    } finally {
      await pools.closeAll();
    }
  });

  it('a host that starts slower than a server-sized connect timeout is waited for, not refused', async () => {
    const driver = createSqliteDriver(parseConnectionUrl(`sqlite:${fx.file}`).target, {}, { connectTimeoutMs: 1 });
    const conn = await driver.connect();
    try {
      await expect(conn.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
    } finally {
      await conn.close();
    }
  });

  it('a SQLite connection cleans itself after every call, so the pool never resets it on borrow', async () => {
    const conn = await fx.connect();
    expect(conn.dirty).toBe(false);
    await conn.execute('PRAGMA cache_size = 3', [], READ);
    expect(conn.dirty).toBe(false);
    await expect(conn.execute('PRAGMA cache_size', [], READ)).resolves.not.toMatchObject({ rows: [{ cache_size: 3 }] });
  });
});
