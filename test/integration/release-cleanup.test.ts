/**
 * A connection is clean when it goes back to its pool, not only when it is next borrowed: after a
 * call returns, a second admin session sees nothing the call left behind on the idle connection
 * (locks, temporary tables, settings, dblink connections), and the next call on the same
 * connection finds nothing either. Real servers, a real pool, no statement check.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import type { JsonValue } from '../../shared/schemas.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';

const pgAvailable = await serverAvailable('postgres');
const myAvailable = await serverAvailable('mysql');
const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;

async function poolOn(url: string): Promise<Pool> {
  const { target, password } = parseConnectionUrl(url);
  const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
  return new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 1 }, 'test');
}

/** One call through the pool, as the query service makes it; the first row's first value. */
async function call(pool: Pool, sql: string, readOnly = true): Promise<JsonValue | undefined> {
  const lease = await pool.acquire();
  let failure: unknown;
  try {
    const result = await lease.connection.execute(sql, [], { maxRows: 10, timeoutMs: 10_000, readOnly });
    const row = result.rows[0];
    return row ? Object.values(row)[0] : undefined;
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    lease.release(failure);
  }
}

/** Asks `probe` until it answers 0 (a server process ending after its client hung up is not instant), at most 5 s. */
async function untilZero(probe: () => Promise<number>): Promise<number> {
  const deadline = Date.now() + 5000;
  let n = await probe();
  while (n !== 0 && Date.now() < deadline) n = await probe();
  return n;
}

describe.skipIf(!pgAvailable)('PostgreSQL: a returned connection holds nothing of the call', () => {
  const role = `hclean_${suffix}`;
  const password = randomBytes(12).toString('hex');
  const db = `hclean_db_${suffix}`;
  const fdwApp = `hfdw_${suffix}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  let pool: Pool;
  let superPool: Pool;
  const u = new URL(PG_URL);

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${db}`);
    const inDb = new pg.Client({ connectionString: `postgres://${u.username}@${u.host}/${db}` });
    await inDb.connect();
    await inDb.query('CREATE EXTENSION dblink');
    // A loopback postgres_fdw server whose sessions name themselves, and a foreign table over it.
    await inDb.query('CREATE EXTENSION postgres_fdw');
    await inDb.query(
      `CREATE SERVER hloop FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '${u.hostname}', port '${u.port || 5432}', dbname '${db}', application_name '${fdwApp}')`,
    );
    await inDb.query(`CREATE USER MAPPING FOR CURRENT_USER SERVER hloop OPTIONS (user '${u.username}')`);
    await inDb.query("CREATE FOREIGN TABLE hft (datname name) SERVER hloop OPTIONS (schema_name 'pg_catalog', table_name 'pg_database')");
    await inDb.end();
    pool = await poolOn(`postgres://${role}:${password}@${u.host}${u.pathname}`);
    // dblink lets only a superuser connect without a password; the case was such a connection marked read-only.
    superPool = await poolOn(`postgres://${u.username}@${u.host}/${db}`);
  });

  afterAll(async () => {
    await pool?.end();
    await superPool?.end();
    await admin
      .query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 OR usename = $2`, [db, role])
      .catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${db}`).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  });

  const count = async (sql: string, params: unknown[]) => (await admin.query(sql, params)).rows[0].n as number;

  it('session advisory locks are released', async () => {
    const key = Number.parseInt(randomBytes(3).toString('hex'), 16);
    await call(pool, `SELECT pg_advisory_lock(${key})`);
    expect(await count(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1`, [key])).toBe(0);
  });

  it('temporary tables of a committed write are dropped', async () => {
    const table = `htmp_${suffix}`;
    await call(pool, `CREATE TEMP TABLE ${table} (a int)`, false);
    expect(await count('SELECT count(*)::int AS n FROM pg_class WHERE relname = $1', [table])).toBe(0);
  });

  it('session settings of a committed write are reset', async () => {
    const name = `hleak_${suffix}`;
    await call(pool, `SELECT set_config('application_name', '${name}', false)`, false);
    expect(await count('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [name])).toBe(0);
    expect(await call(pool, 'SHOW work_mem')).toBe((await admin.query('SHOW work_mem')).rows[0].work_mem);
  });

  it('held cursors, prepared statements and LISTEN are gone for the next call', async () => {
    await call(pool, 'DECLARE hcur CURSOR WITH HOLD FOR SELECT 1', false);
    expect(await call(pool, "SELECT count(*)::int FROM pg_cursors WHERE name = 'hcur'")).toBe(0);
    await call(pool, 'PREPARE hprep AS SELECT 1');
    expect(await call(pool, 'SELECT count(*)::int FROM pg_prepared_statements')).toBe(0);
    await call(pool, 'LISTEN hchan', false);
    expect(await call(pool, 'SELECT count(*)::int FROM pg_listening_channels()')).toBe(0);
  });

  it("a seed set with setseed() does not decide the next call's random()", async () => {
    // Two calls seeded alike and followed by random() on the same connection would answer the same number.
    await call(pool, 'SELECT setseed(0.25)');
    const first = await call(pool, 'SELECT random()');
    await call(pool, 'SELECT setseed(0.25)');
    const second = await call(pool, 'SELECT random()');
    const seeded = (await admin.query('SELECT setseed(0.25), random() AS r')).rows[0].r as number;
    expect([first, second]).not.toContain(seeded);
    expect(first).not.toBe(second);
  });

  it('named and unnamed dblink connections are closed', async () => {
    const named = `hdbl_${suffix}`;
    const unnamed = `hdblu_${suffix}`;
    const conn = (app: string) => `host=${u.hostname} port=${u.port || 5432} dbname=${db} user=${u.username} application_name=${app}`;
    await call(superPool, `SELECT dblink_connect('k', '${conn(named)}')`);
    await call(superPool, `SELECT dblink_connect('${conn(unnamed)}')`);
    const remote = () => count('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name IN ($1, $2)', [named, unnamed]);
    expect(await untilZero(remote)).toBe(0);
    expect(await call(superPool, 'SELECT dblink_get_connections()')).toBeNull();
  });

  it('a postgres_fdw session opened by a foreign-table read is closed', async () => {
    expect(await call(superPool, 'SELECT count(*)::int FROM hft')).toBeGreaterThan(0);
    const remote = () => count('SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1', [fdwApp]);
    expect(await untilZero(remote)).toBe(0);
    expect(await call(superPool, 'SELECT count(*)::int FROM postgres_fdw_get_connections()')).toBe(0);
  });
});

describe.skipIf(!myAvailable)('MariaDB: a returned connection holds nothing of the call', () => {
  const login = new MariadbLogin(`hclean_${suffix}`);
  const db = MYSQL_TEST_DB;
  const fn = `hlock_${suffix}`;
  const lock = `hanactl_lock_${suffix}`;
  let admin: mysql.Connection;
  let pool: Pool;

  beforeAll(async () => {
    admin = await openMariadbAdmin();
    await admin.query(`CREATE FUNCTION ${fn}() RETURNS INT NOT DETERMINISTIC SQL SECURITY INVOKER RETURN GET_LOCK('${lock}', 0)`);
    await login.create(admin, [`EXECUTE ON FUNCTION ${db}.${fn}`]);
    pool = await poolOn(login.url({ withPassword: true }));
  });

  afterAll(async () => {
    await pool?.end();
    await admin?.query(`DROP FUNCTION IF EXISTS ${fn}`).catch(() => {});
    await login.drop(admin);
    await admin?.end();
  });

  // A read-only call never runs it (the routine judgement refuses a body it cannot read, and
  // GET_LOCK in one it can); a call on a connection open for writes does.
  it('a user-level lock taken by a stored function in a call open for writes is released', async () => {
    expect(await call(pool, `SELECT ${fn}()`, false)).toBe(1);
    const [rows] = await admin.query('SELECT IS_USED_LOCK(?) AS holder', [lock]);
    expect((rows as { holder: number | null }[])[0]?.holder).toBeNull();
  });

  // Temporary tables: the shared driver suite (test/drivers/conformance.ts), on every engine.
  it('user variables and prepared statements are gone for the next call', async () => {
    await call(pool, 'SELECT @hleak := 42');
    expect(await call(pool, 'SELECT @hleak')).toBeNull();
    await call(pool, "PREPARE hprep FROM 'SELECT 1'");
    await expect(call(pool, 'EXECUTE hprep')).rejects.toThrow(/Unknown prepared statement/);
  });
});
