import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createPostgresDriver } from '../../../../daemon/engines/postgres/index.js';
import type { SqliteConnection } from '../../../../daemon/engines/sqlite/index.js';
import { Pool } from '../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../../../helpers/engines.js';
import { poolOptions, READ, sqliteFixture } from './fixtures.js';

const fx = sqliteFixture();
afterAll(() => fx.cleanup());

describe('a connection that broke while idle', () => {
  it('is discarded on borrow when it was closed underneath the pool', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 2 }), 'test');
    const lease = await pool.acquire();
    lease.release();
    expect(pool.idleCount).toBe(1);
    await lease.connection.close(); // behind the pool's back

    const next = await pool.acquire();
    expect(next.connection).not.toBe(lease.connection);
    await expect(next.connection.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
    expect(pool.destroyed).toBe(1);
    expect(pool.totalCount).toBe(1);
    next.release();
    await pool.end();
  });

  it('is discarded on borrow when its SQLite worker process died', async () => {
    const pool = new Pool(fx.open, poolOptions({ max: 1 }), 'test');
    const lease = await pool.acquire();
    lease.release();
    const pid = (lease.connection as SqliteConnection).pid;
    expect(pid).toBeTypeOf('number');
    process.kill(pid as number, 'SIGKILL');
    await vi.waitFor(() => expect(lease.connection.broken).toBe(true), { timeout: 3_000, interval: 10 });

    const next = await pool.acquire();
    expect(next.connection).not.toBe(lease.connection);
    await expect(next.connection.execute('SELECT 1 AS one', [], READ)).resolves.toMatchObject({ rows: [{ one: 1 }] });
    expect(pool.destroyed).toBe(1);
    expect(pool.created).toBe(2);
    next.release();
    await pool.end();
  });
});

describe('a PostgreSQL connection whose backend was terminated', () => {
  let available = false;
  beforeAll(async () => {
    available = await serverAvailable('postgres');
  });

  it('is discarded on borrow and replaced by a working one', async (ctx) => {
    if (!available) ctx.skip('PostgreSQL is not reachable; start it to run this test');
    const marker = `hanactl-pooltest-${randomBytes(6).toString('hex')}`;
    const target = parseConnectionUrl(`${PG_URL}?application_name=${marker}`).target;
    const driver = createPostgresDriver(target, {}, { connectTimeoutMs: 3000 });
    const pool = new Pool(() => driver.connect(), poolOptions({ max: 2 }), 'test');
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      const lease = await pool.acquire();
      lease.release();
      const killed = await admin.query('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = $1', [
        marker,
      ]);
      expect(killed.rowCount).toBe(1);
      await vi.waitFor(() => expect(lease.connection.broken).toBe(true), { timeout: 3_000, interval: 10 });

      const next = await pool.acquire();
      expect(next.connection).not.toBe(lease.connection);
      await expect(next.connection.execute('SELECT 1 AS one', [], READ)).resolves.toMatchObject({ rows: [{ one: 1 }] });
      expect(pool.destroyed).toBe(1);
      next.release();
    } finally {
      await pool.end();
      await admin.end();
    }
  });
});
