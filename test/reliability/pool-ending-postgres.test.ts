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
import { afterAll, beforeAll, describe, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { type MarkedPostgres, openMarkedPostgres } from '../helpers/marked-postgres.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';
import { callAs, expectPlaceKeptUntilGone } from './helpers/pool-ending.js';

const available = await serverAvailable('postgres');
let STUCK = '';
/** One expression of `terms` large numeric products, which no cancel or terminate interrupts before it ends. */
const stuckStatement = (terms: number) =>
  `SELECT length(greatest(${Array(terms).fill('x*y').join(', ')})::text) AS n FROM (SELECT 7::numeric^70000 x, 3::numeric^100000 y OFFSET 0) s`;

/**
 * The statement sized to run about 8 s on this machine at its quickest: each product's time is
 * measured (the fastest of two runs of 2 and of 10 terms), so the statement outlives the call's
 * 1 s timeout and its cancel on a quiet machine as on a loaded one, where it only runs longer.
 */
async function calibratedStatement(client: pg.Client): Promise<string> {
  const fastest = async (terms: number) => {
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      await client.query(stuckStatement(terms));
      best = Math.min(best, performance.now() - started);
    }
    return best;
  };
  const perTerm = Math.max((await fastest(10)) - (await fastest(2)), 1) / 8;
  return stuckStatement(Math.min(3000, Math.max(20, Math.ceil(8000 / perTerm))));
}
const TIMEOUT_MS = 1000;

describe.skipIf(!available)('PostgreSQL: a backend left running past its call', () => {
  let pg_: MarkedPostgres | undefined;
  let pool: Pool;
  let admin: pg.Client;
  const marker = `pool_ending_${process.pid}`;

  beforeAll(async () => {
    pg_ = await openMarkedPostgres(marker, { max: 2, acquireTimeoutMillis: 30_000 });
    ({ pool, admin } = pg_);
    STUCK ||= await calibratedStatement(admin);
  }, 60_000);

  afterAll(() => pg_?.end());

  const run = callAs(() => pool);

  /** The pool's server sessions, as the server sees them (the short-lived cancel and terminate connections left out). */
  const backends = async () =>
    (
      await admin.query<{ pid: number; stuck: boolean }>(
        `SELECT pid, query LIKE '%greatest(%' AS stuck FROM pg_stat_activity
          WHERE application_name = $1 AND query <> '' AND query NOT LIKE '%_backend(%'`,
        [marker],
      )
    ).rows;

  it(
    'keeps its place in the pool and in its session share until the backend is gone',
    () =>
      expectPlaceKeptUntilGone({
        pool,
        run,
        statement: STUCK,
        timeoutMs: TIMEOUT_MS,
        stuck: async () => (await backends()).filter((b) => b.stuck).map((b) => b.pid),
        serverSessions: async () => (await backends()).length,
      }),
    120_000,
  );
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
    STUCK ||= await calibratedStatement(admin);
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    bouncer = await PgBouncer.start({ users: { [role]: password }, poolSize: 2 });
    const { target } = parseConnectionUrl(bouncer.url(role));
    const driver = (await loadDriverFactory('postgres'))(target, { password }, { connectTimeoutMs: 5000 });
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 2, min: 0, acquireTimeoutMillis: 30_000 }, 'test');
  }, 60_000);

  afterAll(async () => {
    await pool?.end();
    await bouncer?.stop();
    await admin?.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]).catch(() => {});
    await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin?.end();
  });

  const run = callAs(() => pool);

  const stuck = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE usename = $1 AND state = 'active' AND query LIKE '%greatest(%'",
        [role],
      )
    ).rows.map((r) => r.pid);

  it(
    'keeps its place until the statement has ended on the backend',
    () => expectPlaceKeptUntilGone({ pool, run, statement: STUCK, timeoutMs: TIMEOUT_MS, stuck }),
    120_000,
  );
});
