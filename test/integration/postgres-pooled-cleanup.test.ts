/**
 * Behind PgBouncer in transaction pooling mode a client keeps its server backend only while a
 * transaction is open: once the call's transaction has ended, the next message may go to another
 * backend. What a failed or cut call leaves in its session that ROLLBACK does not undo (here a
 * session advisory lock or a dblink connection) must be cleaned on the backend the call ran on, not on whichever the
 * pooler gives next; otherwise the state stays with an idle backend, seen by every later client.
 *
 * Made deterministic with a pool of two backends: both are held by two other clients in open
 * transactions, the call and then a third client wait (in that order, as PgBouncer's console
 * says), one holder commits, and the call gets that backend. When the call's transaction ends the
 * waiting client gets it, so any clean-up sent on its own afterwards can only run once the second
 * holder lets its backend go — the other one. Runs straight through the driver: the statement
 * check is not what is tested here, and it refuses taking a lock in a statement. The role is a
 * superuser only because dblink lets no other role connect where the server asks no password.
 */
import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection, ExecuteOptions, StatementResult } from '../../daemon/engines/driver.js';
import { createPostgresDriver } from '../../daemon/engines/postgres/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';

const available = (await serverAvailable('postgres')) && pgbouncerAvailable();

describe.skipIf(!available)('PostgreSQL behind PgBouncer: a call that fails or is cut is cleaned on its own backend', () => {
  const role = `hclean_${process.pid}_${randomBytes(3).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  let admin: pg.Client;
  let scratch: ScratchPgDatabase;
  const dbName = `${role}_db`;
  let bouncer: PgBouncer;
  let console_: pg.Client;
  const opened: pg.Client[] = [];
  const connections: DriverConnection[] = [];

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} SUPERUSER LOGIN PASSWORD '${password}'`);
    scratch = await scratchPgDatabase(dbName, [
      'CREATE EXTENSION dblink',
      // Checked when the transaction commits, unless asked earlier.
      'CREATE TABLE deferred_once (a int UNIQUE DEFERRABLE INITIALLY DEFERRED)',
    ]);
    bouncer = await PgBouncer.start({ users: { [role]: password }, poolSize: 2 });
    const consoleUrl = new URL(bouncer.consoleUrl(role));
    consoleUrl.password = password;
    console_ = new pg.Client({ connectionString: consoleUrl.toString() });
    await console_.connect();
  });

  afterAll(async () => {
    for (const c of connections) await c.close();
    for (const c of opened) await c.end().catch(() => {});
    await console_?.end().catch(() => {});
    await bouncer?.stop();
    await scratch?.drop();
    await admin?.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]).catch(() => {});
    await admin?.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin?.end();
  });

  /** The scratch database through the pooler, as the role. */
  const pooled = (): URL => {
    const url = new URL(bouncer.url(role));
    url.pathname = `/${dbName}`;
    return url;
  };

  /** A plain client of the pooler, as the role. */
  const client = async (): Promise<pg.Client> => {
    const url = pooled();
    url.password = password;
    const c = new pg.Client({ connectionString: url.toString() });
    opened.push(c);
    await c.connect();
    return c;
  };

  /** hanactl's connection to the pooler, as the daemon's pool opens it. */
  const connection = async (): Promise<DriverConnection> => {
    const { target } = parseConnectionUrl(pooled().toString());
    const c = await createPostgresDriver(target, { password }, { connectTimeoutMs: 5000 }).connect();
    connections.push(c);
    return c;
  };

  /** Clients of the role waiting for a server backend, as PgBouncer's console counts them. */
  const waiting = async (): Promise<number> => {
    const { rows } = await console_.query('SHOW POOLS');
    return rows.filter((r) => r.user === role && r.database === dbName).reduce((n, r) => n + Number(r.cl_waiting), 0);
  };

  /** Resolves once `what` holds, asking after each round trip; fails past `timeoutMs`. */
  const until = async (what: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
    const started = performance.now();
    while (!(await what())) if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
  };

  /** Backends that hold the session advisory lock `key`. */
  const holders = async (key: number): Promise<number> => {
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND objsubid = 1 AND granted",
      [key],
    );
    return rows[0].n;
  };

  /**
   * Runs `sql` on hanactl's connection as the race above arranges it, then gives the connection
   * back as the pool does (reset when the call left it dirty), and returns what the call ended
   * with and whether the connection may go back to its pool (cleaned, not closed instead).
   */
  const raced = async (
    sql: string,
    options: ExecuteOptions,
    running?: () => Promise<void>,
  ): Promise<{ ended: StatementResult | Error; kept: boolean }> => {
    const conn = await connection();
    const [holderA, holderB, waiter] = [await client(), await client(), await client()];
    try {
      return await race(conn, holderA, holderB, waiter, sql, options, running);
    } finally {
      // A test that failed part-way leaves no backend held by these clients.
      for (const c of [holderA, holderB, waiter]) await c.end().catch(() => {});
    }
  };

  const race = async (
    conn: DriverConnection,
    holderA: pg.Client,
    holderB: pg.Client,
    waiter: pg.Client,
    sql: string,
    options: ExecuteOptions,
    running?: () => Promise<void>,
  ): Promise<{ ended: StatementResult | Error; kept: boolean }> => {
    await holderA.query('BEGIN');
    await holderA.query('SELECT 1');
    await holderB.query('BEGIN');
    await holderB.query('SELECT 1');
    const call = conn.execute(sql, [], options).catch((err: Error) => err);
    await until(async () => (await waiting()) === 1);
    const waited = waiter.query('BEGIN; SELECT 1');
    await until(async () => (await waiting()) === 2);
    await holderA.query('COMMIT');
    await running?.();
    const ended = await call;
    // The pool's part: a connection a call left dirty is reset before anyone borrows it again.
    const reset = conn.dirty ? conn.reset() : Promise.resolve();
    reset.catch(() => {});
    await holderB.query('COMMIT');
    await reset.catch(() => {});
    await waited;
    await waiter.query('COMMIT');
    return { ended, kept: !conn.broken && conn.dirty !== true };
  };

  const READ: ExecuteOptions = { maxRows: 10, timeoutMs: 20_000, readOnly: true };

  it('after a statement error, no backend holds the session lock the call took', async () => {
    const key = randomInt(1_000_000, 2_000_000);
    // The lock is taken, then the cast of text that is not a number fails the statement.
    const { ended, kept } = await raced(`SELECT (pg_advisory_lock(${key})::text || 'x')::int AS n`, READ);
    expect(ended).toBeInstanceOf(Error);
    expect(await holders(key)).toBe(0);
    expect(kept).toBe(true);
  });

  /** A key the test holds in the scratch database (advisory locks are per database), so that a call asking for it waits. */
  const blocking = async (): Promise<{ key: number; release(): Promise<void> }> => {
    const key = randomInt(5_000_000, 6_000_000);
    await scratch.db.query('SELECT pg_advisory_lock($1)', [key]);
    return { key, release: async () => void (await scratch.db.query('SELECT pg_advisory_unlock($1)', [key])) };
  };

  /** Backends of the role waiting for the advisory lock `key`. */
  const waiters = async (key: number): Promise<number> => {
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND objsubid = 1 AND NOT granted",
      [key],
    );
    return rows[0].n;
  };

  it('after a call its caller cancels, no backend holds the session lock the call took', async () => {
    const key = randomInt(4_000_000, 4_500_000);
    const wall = await blocking();
    const controller = new AbortController();
    try {
      // The lock is taken, then the call waits for one the test holds until its caller cancels it.
      const sql = `SELECT pg_advisory_lock(${key})::text || pg_advisory_lock(${wall.key})::text AS n`;
      const { ended, kept } = await raced(sql, { ...READ, signal: controller.signal }, async () => {
        await until(async () => (await waiters(wall.key)) === 1);
        controller.abort();
      });
      expect(ended).toMatchObject({ code: 'QUERY_CANCELLED' });
      expect(await holders(key)).toBe(0);
      expect(kept).toBe(true);
    } finally {
      await wall.release();
    }
  });

  it('after a call that runs past its time limit, no backend holds the session lock the call took', async () => {
    const key = randomInt(4_500_000, 5_000_000);
    const wall = await blocking();
    try {
      const sql = `SELECT pg_advisory_lock(${key})::text || pg_advisory_lock(${wall.key})::text AS n`;
      const { ended, kept } = await raced(sql, { ...READ, timeoutMs: 1000 });
      expect(ended).toMatchObject({ code: 'QUERY_TIMEOUT' });
      expect(await holders(key)).toBe(0);
      expect(kept).toBe(true);
    } finally {
      await wall.release();
    }
  });

  it('after a write that fails its deferred constraint check, no backend holds the session lock the call took', async () => {
    const key = randomInt(6_000_000, 7_000_000);
    const sql = `INSERT INTO deferred_once SELECT 1 FROM (SELECT pg_advisory_lock(${key})) l CROSS JOIN generate_series(1, 2)`;
    const { ended, kept } = await raced(sql, { ...READ, readOnly: false });
    expect(ended).toBeInstanceOf(Error);
    expect(String(ended)).toMatch(/duplicate key/);
    expect(await holders(key)).toBe(0);
    expect(kept).toBe(true);
  });

  it('after a read cut at the result cap, no backend holds the session lock the call took', async () => {
    const key = randomInt(2_000_000, 3_000_000);
    // Rows far past the byte cap: the rest is cancelled on the server once the cap is full.
    // generate_series in the select list streams its rows (in FROM it would collect them all first).
    const sql = `SELECT generate_series(1, 50000000) AS g, repeat('x', 1000) AS pad FROM (SELECT pg_advisory_lock(${key})) l`;
    const { ended, kept } = await raced(sql, { ...READ, maxRows: 100_000, maxBytes: 64 * 1024 });
    expect(ended).not.toBeInstanceOf(Error);
    expect((ended as StatementResult).truncated).toBe(true);
    expect(await holders(key)).toBe(0);
    expect(kept).toBe(true);
  });

  it('after a call that succeeds, no backend holds the session lock the call took', async () => {
    const key = randomInt(3_000_000, 4_000_000);
    const { ended, kept } = await raced(`SELECT pg_advisory_lock(${key})::text AS n`, READ);
    expect(ended).not.toBeInstanceOf(Error);
    expect(await holders(key)).toBe(0);
    expect(kept).toBe(true);
  });

  it('after a call that succeeds, no dblink connection the call opened stays open', async () => {
    const app = `hdbl_${randomBytes(4).toString('hex')}`;
    const target = `host=${new URL(PG_URL).hostname} port=${new URL(PG_URL).port || 5432} dbname=${dbName} user=${role} application_name=${app}`;
    const { ended, kept } = await raced(`SELECT dblink_connect('${app}', '${target}') AS c`, READ);
    expect(ended).not.toBeInstanceOf(Error);
    // The remote session ends once its client has hung up: asked until it is gone, at most 5 s.
    const remote = async () =>
      (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app])).rows[0].n as number;
    await until(async () => (await remote()) === 0, 5000);
    expect(kept).toBe(true);
  });

  it('after a statement error, no dblink connection the call opened stays open', async () => {
    const app = `hdbl_${randomBytes(4).toString('hex')}`;
    const target = `host=${new URL(PG_URL).hostname} port=${new URL(PG_URL).port || 5432} dbname=${dbName} user=${role} application_name=${app}`;
    const { ended, kept } = await raced(`SELECT (dblink_connect('${app}', '${target}') || 'x')::int AS c`, READ);
    expect(ended).toBeInstanceOf(Error);
    const remote = async () =>
      (await admin.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [app])).rows[0].n as number;
    await until(async () => (await remote()) === 0, 5000);
    expect(kept).toBe(true);
  });
});
