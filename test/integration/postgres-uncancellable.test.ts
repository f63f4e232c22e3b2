/**
 * A statement PostgreSQL cannot cancel: its scanner does not look for interrupts, and on a long
 * run of unterminated nested comments (`/*` repeated) it works for a time that grows with the
 * square of the text. The call must still end at its timeout, and the connection whose cancel did
 * not take must be replaced, not returned to the pool; the pool of one opens its replacement only
 * once the backend left running has ended, never two server sessions at once. Runs straight through a pool and driver
 * (the statement check refuses this text before any connection is borrowed).
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pool } from '../../daemon/pools/pool.js';
import { serverAvailable } from '../helpers/engines.js';
import { type MarkedPostgres, openMarkedPostgres } from '../helpers/marked-postgres.js';

const available = await serverAvailable('postgres');
/** Several seconds of scanning on this machine's PostgreSQL, which no cancel interrupts. */
const STUCK = `SELECT 1 ${'/*'.repeat(24_000)}`;

describe.skipIf(!available)('PostgreSQL: a cancel that does not take', () => {
  let pg_: MarkedPostgres | undefined;
  let pool: Pool;
  let admin: pg.Client;
  const marker = `uncancellable_${process.pid}`;

  beforeAll(async () => {
    pg_ = await openMarkedPostgres(marker, { max: 1 });
    ({ pool, admin } = pg_);
  });

  afterAll(() => pg_?.end());

  const run = async (sql: string, timeoutMs: number) => {
    const lease = await pool.acquire();
    let failure: unknown;
    try {
      return await lease.connection.execute(sql, [], { maxRows: 10, timeoutMs, readOnly: true });
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      lease.release(failure);
    }
  };

  /** The pool's server sessions, as the server sees them (the short-lived cancel and terminate connections left out). */
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query <> '' AND query NOT LIKE '%_backend(%'",
        [marker],
      )
    ).rows.map((r) => r.pid);

  it('ends the call at its timeout and replaces the connection, once its backend has ended, instead of reusing it', async () => {
    const first = await run('SELECT pg_backend_pid() AS pid', 5000);
    const stuckPid = first.rows[0]?.pid;
    const started = performance.now();
    await expect(run(STUCK, 300)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    const took = performance.now() - started;
    // timeout + the client's 1 s margin + the 1 s grace for the cancel, with room for a loaded machine.
    expect(took).toBeLessThan(300 + 1000 + 1000 + 1500);
    const next = await run('SELECT pg_backend_pid() AS pid', 5000);
    expect(next.rows[0]?.pid).not.toBe(stuckPid);
    expect(await backends()).toEqual([next.rows[0]?.pid]);
    expect(pool.endingCount).toBe(0);
    expect(pool.destroyed).toBeGreaterThanOrEqual(1);
  });
});
