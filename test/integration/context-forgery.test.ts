/**
 * Context values hold even when the statement check is fooled: agent SQL that changes a context
 * value part-way through the statement (a subquery, a CTE, a function) gets no rows back. The
 * statements below run straight through a real pool and driver, with no statement check at all,
 * so this layer is proven alone.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { RlsFixture } from '../helpers/rls-fixture.js';

const pgAvailable = await serverAvailable('postgres');
const myAvailable = await serverAvailable('mysql');

/** A pool on `url`, as the daemon builds one. */
async function poolOn(url: string): Promise<Pool> {
  const { target, password } = parseConnectionUrl(url);
  const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
  return new Pool(() => driver.connect(), DEFAULT_POOL_OPTIONS, 'test');
}

/** One call through the pool as customer `customer`, as the query service makes it (no statement check). */
async function call(pool: Pool, sql: string, customer: string, readOnly = true) {
  const lease = await pool.acquire();
  let failure: unknown;
  try {
    return await lease.connection.execute(sql, [], { maxRows: 100, timeoutMs: 10_000, readOnly, context: { CUSTOMER_ID: customer } });
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    lease.release(failure);
  }
}

const refusal = { code: 'CONTEXT_CHANGED', message: expect.stringContaining('CUSTOMER_ID') };

describe.skipIf(!pgAvailable)('PostgreSQL: a statement that changes a context value gets no rows', () => {
  const rls = new RlsFixture({ role: 'hctx_forge', table: 'forge_orders' });
  const fn = `${rls.table}_set`;
  let pool: Pool;

  beforeAll(async () => {
    await rls.setUp();
    await rls.admin.query(`GRANT INSERT ON ${rls.table} TO ${rls.role}`);
    await rls.admin.query(`CREATE FUNCTION ${fn}(v text) RETURNS text LANGUAGE sql AS $$ SELECT set_config('mcp.customer_id', v, true) $$`);
    await rls.admin.query(`GRANT EXECUTE ON FUNCTION ${fn}(text) TO ${rls.role}`);
    const u = new URL(PG_URL);
    pool = await poolOn(`postgres://${rls.role}:${rls.password}@${u.host}${u.pathname}`);
  });

  afterAll(async () => {
    await pool?.end();
    await rls.admin?.query(`DROP FUNCTION IF EXISTS ${fn}(text)`).catch(() => {});
    await rls.dispose();
  });

  it('sees its own rows when it changes nothing', async () => {
    const result = await call(pool, rls.select, '1');
    expect(result.rowCount).toBe(5);
    expect(result.rows.every((r) => r.customer_id === 1)).toBe(true);
  });

  it.each([
    [
      'a scalar subquery',
      `SELECT set_config('mcp.customer_id', '2', true) AS b, (SELECT string_agg(item, ',') FROM ${rls.table}) AS items`,
    ],
    [
      'a CTE',
      `WITH s AS MATERIALIZED (SELECT set_config('mcp.customer_id', '2', true) AS v) SELECT o.* FROM s CROSS JOIN LATERAL (SELECT * FROM ${rls.table} WHERE s.v IS NOT NULL) o`,
    ],
    [
      'a session-wide set_config',
      `SELECT set_config('mcp.customer_id', '2', false) AS b, (SELECT string_agg(item, ',') FROM ${rls.table}) AS items`,
    ],
    ['a function', `SELECT ${fn}('2') AS b, (SELECT string_agg(item, ',') FROM ${rls.table}) AS items`],
    [
      'search_path moved first',
      `SELECT set_config('search_path', 'nowhere', true), set_config('mcp.customer_id', '2', true) AS b, (SELECT string_agg(item, ',') FROM public.${rls.table}) AS items`,
    ],
  ])('refuses the result of %s that switches to customer 2', async (_how, sql) => {
    await expect(call(pool, sql, '1')).rejects.toMatchObject(refusal);
    // The pool recovers and the next caller is scoped as before.
    const next = await call(pool, rls.select, '3');
    expect(next.rows.map((r) => r.customer_id)).toEqual([3, 3, 3, 3, 3]);
  });

  it('does not commit a write made under a changed value', async () => {
    const forged = `forged-${randomBytes(3).toString('hex')}`;
    const sql = `WITH s AS MATERIALIZED (SELECT set_config('mcp.customer_id', '2', true) AS v) INSERT INTO ${rls.table} SELECT 2, '${forged}' FROM s`;
    await expect(call(pool, sql, '1', false)).rejects.toMatchObject(refusal);
    const { rows } = await rls.admin.query(`SELECT count(*)::int AS n FROM ${rls.table} WHERE item = $1`, [forged]);
    expect(rows[0].n).toBe(0);
  });
});

describe.skipIf(!myAvailable)('MariaDB: a statement that changes a context value gets no rows', () => {
  const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
  const login = new MariadbLogin(`hforge_${suffix}`);
  const db = MYSQL_TEST_DB;
  const table = `forge_orders_${suffix}`;
  const view = `forge_mine_${suffix}`;
  const setter = `forge_set_${suffix}`;
  let admin: mysql.Connection;
  let pool: Pool;

  beforeAll(async () => {
    admin = await openMariadbAdmin();
    await admin.query(`CREATE TABLE ${table} (customer_id INT NOT NULL, item VARCHAR(40) NOT NULL)`);
    await admin.query(`INSERT INTO ${table} SELECT c.seq, CONCAT('item-', c.seq, '-', g.seq) FROM seq_1_to_3 c, seq_1_to_5 g`);
    await login.create(admin);
    // The context recipe (docs/context-parameters.md): the user's own function, and a view it may read.
    await admin.query(
      `CREATE DEFINER = ${await login.definer()} FUNCTION ${table}_who() RETURNS VARCHAR(64) DETERMINISTIC SQL SECURITY INVOKER RETURN @mcp_customer_id`,
    );
    await admin.query(
      `CREATE SQL SECURITY DEFINER VIEW ${view} AS SELECT customer_id, item FROM ${table} WHERE customer_id = ${table}_who()`,
    );
    await admin.query(
      `CREATE FUNCTION ${setter}(v VARCHAR(64)) RETURNS INT NOT DETERMINISTIC SQL SECURITY INVOKER BEGIN SET @mcp_customer_id = v; RETURN 1; END`,
    );
    await login.grant(admin, [`SELECT, SHOW VIEW ON ${db}.${view}`, `EXECUTE ON FUNCTION ${db}.${setter}`]);
    pool = await poolOn(login.url({ withPassword: true }));
  });

  afterAll(async () => {
    await pool?.end();
    for (const sql of [
      `DROP VIEW IF EXISTS ${view}`,
      `DROP FUNCTION IF EXISTS ${table}_who`,
      `DROP FUNCTION IF EXISTS ${setter}`,
      `DROP TABLE IF EXISTS ${table}`,
    ])
      await admin?.query(sql).catch(() => {});
    await login.drop(admin);
    await admin?.end();
  });

  it('sees its own rows when it changes nothing', async () => {
    const result = await call(pool, `SELECT customer_id, item FROM ${view}`, '1');
    expect(result.rows.map((r) => r.customer_id)).toEqual([1, 1, 1, 1, 1]);
  });

  it.each([
    ['an assignment beside a subquery', `SELECT @mcp_customer_id := '2' AS b, (SELECT GROUP_CONCAT(item) FROM ${view}) AS items`],
    ['a CTE', `WITH s AS (SELECT @mcp_customer_id := '2' AS v) SELECT o.* FROM s JOIN ${view} o ON s.v IS NOT NULL`],
  ])('refuses the result of %s that switches to customer 2', async (_how, sql) => {
    await expect(call(pool, sql, '1')).rejects.toMatchObject(refusal);
    const next = await call(pool, `SELECT customer_id, item FROM ${view}`, '3');
    expect(next.rows.map((r) => r.customer_id)).toEqual([3, 3, 3, 3, 3]);
  });

  // A stored function that assigns @mcp_* is judged before it runs, so it never reaches the read-back.
  it('refuses a stored function that switches to customer 2 before it runs', async () => {
    await expect(call(pool, `SELECT ${setter}('2') AS b, (SELECT GROUP_CONCAT(item) FROM ${view}) AS items`, '1')).rejects.toMatchObject({
      code: 'STATEMENT_REFUSED',
    });
    const next = await call(pool, `SELECT customer_id, item FROM ${view}`, '3');
    expect(next.rows.map((r) => r.customer_id)).toEqual([3, 3, 3, 3, 3]);
  });
});
