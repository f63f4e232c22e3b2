/**
 * A statement PostgreSQL cannot interrupt for seconds: a numeric expression of many large terms
 * (the executor looks for cancel and terminate only between rows, not inside one expression). The
 * call ends at its timeout, but its backend runs on until the expression ends: that backend must
 * keep counting against the pool and against the share of the session whose call left it, so the
 * pool never has more server sessions than its size and one session cannot stack such backends.
 * Real PostgreSQL, real driver and pool; the session is the MCP session's owner (check-owner.ts).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { asCheckOwner } from '../../daemon/policy/check-owner.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';

const available = await serverAvailable('postgres');
/** About 4-5 s of one expression on this machine, which no cancel or terminate interrupts before it ends. */
const STUCK = `SELECT length(greatest(${Array(44).fill('x*y').join(', ')})::text) AS n FROM (SELECT 7::numeric^70000 x, 3::numeric^100000 y OFFSET 0) s`;
const TIMEOUT_MS = 1000;

describe.skipIf(!available)('PostgreSQL: a backend left running past its call', () => {
  let pool: Pool;
  let admin: pg.Client;
  const marker = `pool_ending_${process.pid}`;

  beforeAll(async () => {
    const { target, password } = parseConnectionUrl(PG_URL);
    const driver = (await loadDriverFactory('postgres'))(
      { ...target, options: { ...target.options, application_name: marker } },
      password !== undefined ? { password } : {},
      { connectTimeoutMs: 5000 },
    );
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 2, min: 0, acquireTimeoutMillis: 30_000 }, 'test');
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [marker]).catch(() => {});
    await admin?.end();
  });

  const run = (session: string, sql: string, timeoutMs = 5000) =>
    asCheckOwner(session, () => pool.use((c) => c.execute(sql, [], { maxRows: 10, timeoutMs, readOnly: true })));

  /** The pool's server sessions, as the server sees them (the short-lived cancel and terminate connections left out). */
  const backends = async () =>
    (
      await admin.query<{ pid: number; stuck: boolean }>(
        `SELECT pid, query LIKE '%greatest(%' AS stuck FROM pg_stat_activity
          WHERE application_name = $1 AND query <> '' AND query NOT LIKE '%_backend(%'`,
        [marker],
      )
    ).rows;

  it('keeps its place in the pool and in its session share until the backend is gone', async () => {
    await expect(run('a', STUCK, TIMEOUT_MS)).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    const left = (await backends()).find((b) => b.stuck);
    // The expression outlives its call: the backend still runs it.
    expect(left).toBeDefined();
    expect(pool.endingCount).toBe(1);

    // The session's share (1 of 2) is the backend its call left: its next call waits for it.
    let ran = false;
    const next = run('a', 'SELECT 3 AS three').finally(() => {
      ran = true;
    });
    // Another session gets the one place left; the pool never has more server sessions than its size.
    await expect(run('b', 'SELECT 2 AS two')).resolves.toMatchObject({ rows: [{ two: 2 }] });
    const during = await backends();
    expect(during.some((b) => b.pid === left?.pid)).toBe(true);
    expect(during.length).toBeLessThanOrEqual(2);
    expect(ran).toBe(false);

    // Once the backend has ended, the place is back and the waiting call runs.
    await expect(next).resolves.toMatchObject({ rows: [{ three: 3 }] });
    expect(pool.endingCount).toBe(0);
    expect((await backends()).some((b) => b.pid === left?.pid)).toBe(false);
  }, 60_000);
});

/**
 * Behind PgBouncer (transaction pooling) the backend is not ours to terminate or watch: the client
 * link stays open, with a last cancel, until the statement's answer arrives through it, and the
 * pool counts the connection until then.
 */
describe.skipIf(!available || !pgbouncerAvailable())('PostgreSQL through PgBouncer: a backend left running past its call', () => {
  const role = `hctx_ending_${process.pid}`;
  const password = randomBytes(12).toString('hex');
  let admin: pg.Client;
  let bouncer: PgBouncer;
  let pool: Pool;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    bouncer = await PgBouncer.start({ users: { [role]: password }, poolSize: 2 });
    const { target } = parseConnectionUrl(bouncer.url(role));
    const driver = (await loadDriverFactory('postgres'))(target, { password }, { connectTimeoutMs: 5000 });
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 2, min: 0, acquireTimeoutMillis: 30_000 }, 'test');
  });

  afterAll(async () => {
    await pool?.end();
    await bouncer?.stop();
    await admin?.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]).catch(() => {});
    await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin?.end();
  });

  const run = (session: string, sql: string, timeoutMs = 5000) =>
    asCheckOwner(session, () => pool.use((c) => c.execute(sql, [], { maxRows: 10, timeoutMs, readOnly: true })));

  const stuck = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE usename = $1 AND state = 'active' AND query LIKE '%greatest(%'",
        [role],
      )
    ).rows.map((r) => r.pid);

  it('keeps its place until the statement has ended on the backend', async () => {
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
