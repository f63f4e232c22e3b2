import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { loadDriverFactory } from '../../../../daemon/engines/index.js';
import { PoolManager } from '../../../../daemon/pools/pool-manager.js';
import { type ConnectionRecord, makeRecord } from '../../../../daemon/registry/connection-record.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { CONNECT_TIMEOUT_MS, poolOptions, READ, sleep } from './fixtures.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => { exec(sql: string): void; close(): void };

const dir = mkdtempSync(join(tmpdir(), 'hanactl-pool-manager-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A SQLite file holding one row that says which file it is. */
function sqliteFile(label: string): string {
  const file = join(dir, `${label}.db`);
  const db = new Database(file);
  db.exec(`CREATE TABLE IF NOT EXISTS whoami (label TEXT); DELETE FROM whoami; INSERT INTO whoami VALUES ('${label}');`);
  db.close();
  return file;
}

function record(name: string, url: string, password?: string): ConnectionRecord {
  return makeRecord(
    { name, target: parseConnectionUrl(url).target, allowWrite: false, context: [], createdAt: new Date(0).toISOString() },
    password,
  );
}

/** The first connection name of each open pool, sorted. */
function openPools(pools: PoolManager): (string | undefined)[] {
  return pools
    .stats()
    .map((s) => s.connections[0])
    .sort();
}

let managers: PoolManager[] = [];
function manager(maxPools = 8): PoolManager {
  const m = new PoolManager({ pool: poolOptions({ max: 2 }), connectTimeoutMs: CONNECT_TIMEOUT_MS, maxPools, loadDriverFactory });
  managers.push(m);
  return m;
}
afterEach(async () => {
  await Promise.all(managers.map((m) => m.closeAll()));
  managers = [];
});

describe('PoolManager', () => {
  it('gives two names for the same target one pool, so the second name reuses the warm connection', async () => {
    const file = sqliteFile('shared');
    const pools = manager();
    const a = await pools.poolFor(record('sales', `sqlite:${file}`));
    const b = await pools.poolFor(record('sales-copy', `sqlite:${file}`));
    expect(b.pool).toBe(a.pool);

    const first = await a.pool.acquire();
    first.release();
    const second = await b.pool.acquire();
    expect(second.connection).toBe(first.connection);
    second.release();

    const stats = pools.stats();
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({ engine: 'sqlite', connections: ['sales', 'sales-copy'], created: 1, total: 1, idle: 1 });
  });

  it('shares a pool between names whose URLs differ only in spelling (postgresql: vs postgres:, option order)', async () => {
    const pools = manager();
    const a = await pools.poolFor(record('one', 'postgres://app@db.internal:5432/shop?sslmode=disable&application_name=x', 'pw'));
    const b = await pools.poolFor(record('two', 'postgresql://app@db.internal/shop?application_name=x&sslmode=disable', 'pw'));
    expect(b.pool).toBe(a.pool);
    expect(pools.stats()).toHaveLength(1);
  });

  it('gives a different password its own pool', async () => {
    const pools = manager();
    const a = await pools.poolFor(record('old', 'postgres://app@db.internal:5432/shop', 'first-password'));
    const b = await pools.poolFor(record('new', 'postgres://app@db.internal:5432/shop', 'second-password'));
    const c = await pools.poolFor(record('none', 'postgres://app@db.internal:5432/shop'));
    expect(b.pool).not.toBe(a.pool);
    expect(c.pool).not.toBe(a.pool);
    expect(c.pool).not.toBe(b.pool);
    expect(pools.stats()).toHaveLength(3);
  });

  it('gives different targets different pools', async () => {
    const pools = manager();
    const a = await pools.poolFor(record('a', `sqlite:${sqliteFile('t1')}`));
    const b = await pools.poolFor(record('b', `sqlite:${sqliteFile('t2')}`));
    const c = await pools.poolFor(record('c', 'postgres://app@db.internal:5432/other', 'pw'));
    const d = await pools.poolFor(record('d', 'postgres://app@db.internal:5433/other', 'pw'));
    expect(new Set([a.pool, b.pool, c.pool, d.pool]).size).toBe(4);
  });

  it('creates one pool when two callers ask for a new target at the same moment', async () => {
    const file = sqliteFile('race');
    const pools = manager();
    const [a, b] = await Promise.all([pools.poolFor(record('x', `sqlite:${file}`)), pools.poolFor(record('y', `sqlite:${file}`))]);
    expect(b.pool).toBe(a.pool);
    expect(pools.stats()).toEqual([expect.objectContaining({ connections: ['x', 'y'] })]);
  });

  it('never shows the password in its stats', async () => {
    const pools = manager();
    await pools.poolFor(record('p', 'postgres://app@db.internal:5432/shop', 'pl4nted-pool-secret'));
    expect(JSON.stringify(pools.stats())).not.toContain('pl4nted-pool-secret');
  });

  describe('beyond maxPools', () => {
    it('closes the least recently used idle pool', async () => {
      const pools = manager(2);
      const a = await pools.poolFor(record('a', `sqlite:${sqliteFile('lru-a')}`));
      const leaseA = await a.pool.acquire();
      leaseA.release();
      await sleep(5);
      await pools.poolFor(record('b', `sqlite:${sqliteFile('lru-b')}`));
      await sleep(5);
      await pools.poolFor(record('c', `sqlite:${sqliteFile('lru-c')}`));

      expect(pools.stats().map((s) => s.connections[0])).toEqual(['b', 'c']);
      // Its warm connection was closed.
      await vi.waitFor(() => expect(leaseA.connection.broken).toBe(true), { timeout: 3_000, interval: 10 });
      await expect(a.pool.acquire()).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
      // Asking for the name again builds a fresh pool that works.
      const again = await pools.poolFor(record('a', `sqlite:${join(dir, 'lru-a.db')}`));
      const lease = await again.pool.acquire();
      await expect(lease.connection.execute('SELECT label FROM whoami', [], READ)).resolves.toMatchObject({ rows: [{ label: 'lru-a' }] });
      lease.release();
      expect(again.pool).not.toBe(a.pool);
    });

    it('keeps a pool that was used recently and closes an older one instead', async () => {
      const pools = manager(2);
      const a = await pools.poolFor(record('a', `sqlite:${sqliteFile('recent-a')}`));
      await sleep(5);
      const b = await pools.poolFor(record('b', `sqlite:${sqliteFile('recent-b')}`));
      await sleep(5);
      (await a.pool.acquire()).release(); // a is now the most recently used
      await sleep(5);
      await pools.poolFor(record('c', `sqlite:${sqliteFile('recent-c')}`));
      expect(openPools(pools)).toEqual(['a', 'c']);
      await expect(b.pool.acquire()).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    });

    it('does not close a pool whose connection is in use, however old', async () => {
      const pools = manager(2);
      const a = await pools.poolFor(record('a', `sqlite:${sqliteFile('busy-a')}`));
      const held = await a.pool.acquire();
      await sleep(5);
      await pools.poolFor(record('b', `sqlite:${sqliteFile('busy-b')}`));
      await sleep(5);
      await pools.poolFor(record('c', `sqlite:${sqliteFile('busy-c')}`));
      expect(openPools(pools)).toEqual(['a', 'c']);
      await expect(held.connection.execute('SELECT label FROM whoami', [], READ)).resolves.toMatchObject({ rows: [{ label: 'busy-a' }] });
      held.release();
    });

    it('still hands out a usable pool for a new target when every other pool is busy', async () => {
      const pools = manager(1);
      const a = await pools.poolFor(record('a', `sqlite:${sqliteFile('full-a')}`));
      const held = await a.pool.acquire();
      await sleep(5);
      const b = await pools.poolFor(record('b', `sqlite:${sqliteFile('full-b')}`));
      const lease = await b.pool.acquire();
      await expect(lease.connection.execute('SELECT label FROM whoami', [], READ)).resolves.toMatchObject({ rows: [{ label: 'full-b' }] });
      lease.release();
      held.release();
    });
  });

  describe('forget', () => {
    it('keeps a shared pool open while another name still uses it, and closes it when the last one goes', async () => {
      const file = sqliteFile('forget');
      const pools = manager();
      const sales = record('sales', `sqlite:${file}`);
      const copy = record('sales-copy', `sqlite:${file}`);
      const { pool } = await pools.poolFor(sales);
      await pools.poolFor(copy);
      const lease = await pool.acquire();
      lease.release();

      await pools.forget(sales);
      expect(pools.stats()).toEqual([expect.objectContaining({ connections: ['sales-copy'] })]);
      expect(lease.connection.broken).toBe(false);
      const again = await pool.acquire();
      expect(again.connection).toBe(lease.connection);
      again.release();

      await pools.forget(copy);
      expect(pools.stats()).toEqual([]);
      await vi.waitFor(() => expect(lease.connection.broken).toBe(true), { timeout: 3_000, interval: 10 });
      await expect(pool.acquire()).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    });

    it("leaves the current pool alone when forgetting a name's old definition with another password", async () => {
      const pools = manager();
      const current = await pools.poolFor(record('pg', 'postgres://app@db.internal:5432/shop', 'new-password'));
      await pools.forget(record('pg', 'postgres://app@db.internal:5432/shop', 'old-password'));
      expect(pools.stats()).toEqual([expect.objectContaining({ connections: ['pg'] })]);
      expect(current.pool.waitingCount).toBe(0);
      await pools.forget(record('pg', 'postgres://app@db.internal:5432/shop', 'new-password'));
      expect(pools.stats()).toEqual([]);
    });
  });
});
