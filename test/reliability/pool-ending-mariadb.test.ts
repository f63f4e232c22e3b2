/**
 * A statement MariaDB does not stop at a KILL for seconds: REPLACE on a long string checks the
 * kill flag only when it is done. The call ends at its timeout and KILL grace; the server thread
 * runs on until it sees the kill, and must keep counting against the pool and the calling
 * session's share until then. Real MariaDB, real driver and pool.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';
import { callAs, expectPlaceKeptUntilGone } from './helpers/pool-ending.js';

const available = await serverAvailable('mysql');
const marker = `pool_ending_${process.pid}`;
/** One REPLACE over `n` repetitions, which neither the statement limit nor KILL QUERY interrupts. */
const stuckStatement = (n: number) => `SELECT LENGTH(REPLACE(REPEAT('ab', ${n}), 'a', 'xyz')) AS ${marker}`;
let STUCK = '';

/**
 * The statement sized to run about 8 s on this machine at its quickest: REPLACE's time grows with
 * the square of the string, measured at 40,000 repetitions (the faster of two runs), so the
 * statement outlives the call's 1 s timeout and its KILL on a quiet machine as on a loaded one.
 */
async function calibratedStatement(client: mysql.Connection): Promise<string> {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 2; i++) {
    const started = performance.now();
    await client.query(stuckStatement(40_000));
    best = Math.min(best, performance.now() - started);
  }
  return stuckStatement(Math.min(400_000, Math.ceil(40_000 * Math.sqrt(8000 / Math.max(best, 1)))));
}
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
    STUCK = await calibratedStatement(admin);
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await admin?.end();
  });

  const run = callAs(() => pool);

  /** The thread still running the statement, as the server sees it. */
  const stuck = async (): Promise<number[]> => {
    const [rows] = await admin.query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND INFO NOT LIKE '%PROCESSLIST%'", [
      `%${marker}%`,
    ]);
    return (rows as { ID: number }[]).map((r) => r.ID);
  };

  it(
    'keeps its place in the pool and in its session share until the thread is gone',
    () => expectPlaceKeptUntilGone({ pool, run, statement: STUCK, timeoutMs: TIMEOUT_MS, stuck }),
    120_000,
  );
});
