/**
 * A statement MariaDB does not stop at a KILL for seconds: REPLACE on a long string checks the
 * kill flag only when it is done. The call ends at its timeout and KILL grace; the server thread
 * runs on until it sees the kill, and must keep counting against the pool and the calling
 * session's share until then. Real MariaDB, real driver and pool.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { asCheckOwner } from '../../daemon/policy/check-owner.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('mysql');
const marker = `pool_ending_${process.pid}`;
/** About 4-6 s of one REPLACE on this machine, which neither the statement limit nor KILL QUERY interrupts. */
const STUCK = `SELECT LENGTH(REPLACE(REPEAT('ab', 75000), 'a', 'xyz')) AS ${marker}`;
const TIMEOUT_MS = 1000;

describe.skipIf(!available)('MariaDB: a server thread left running past its call', () => {
  let pool: Pool;
  let admin: mysql.Connection;

  beforeAll(async () => {
    const { target, password } = parseConnectionUrl(MYSQL_URL);
    const driver = (await loadDriverFactory('mysql'))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 2, min: 0, acquireTimeoutMillis: 30_000 }, 'test');
    const u = new URL(MYSQL_URL);
    admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.end();
  });

  const run = (session: string, sql: string, timeoutMs = 5000) =>
    asCheckOwner(session, () => pool.use((c) => c.execute(sql, [], { maxRows: 10, timeoutMs, readOnly: true })));

  /** The thread still running the statement, as the server sees it. */
  const stuck = async (): Promise<number[]> => {
    const [rows] = await admin.query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'", [
      `%${marker}%`,
    ]);
    return (rows as { ID: number }[]).map((r) => r.ID);
  };

  it('keeps its place in the pool and in its session share until the thread is gone', async () => {
    await expect(run('a', STUCK, TIMEOUT_MS)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    expect(await stuck()).toHaveLength(1);
    expect(pool.endingCount).toBe(1);
    let ran = false;
    const next = run('a', 'SELECT 3 AS three').finally(() => {
      ran = true;
    });
    await expect(run('b', 'SELECT 2 AS two')).resolves.toMatchObject({ rows: [{ two: 2 }] });
    expect(await stuck()).toHaveLength(1);
    expect(ran).toBe(false);
    await expect(next).resolves.toMatchObject({ rows: [{ three: 3 }] });
    expect(pool.endingCount).toBe(0);
    expect(await stuck()).toEqual([]);
  }, 60_000);
});
