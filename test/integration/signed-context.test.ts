/**
 * Signed context values on PostgreSQL: a least-privilege role under a row-level-security policy
 * written on the verifying function `<schema>.context('customer_id')` that `hanactl context-sql`
 * prints. The statements run straight through a real pool and driver with no statement check,
 * as if the check had been fooled. A statement that forges the value and sets it back before it
 * ends passes the read-back; under the signed function it still reads no foreign row.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { postgresContextSql } from '../../daemon/engines/postgres/postgres-signed-context.js';
import { newContextKey } from '../../daemon/engines/signed-context.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { RlsFixture } from '../helpers/rls-fixture.js';

const pgAvailable = await serverAvailable('postgres');

async function poolOn(url: string): Promise<Pool> {
  const { target, password } = parseConnectionUrl(url);
  const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
  return new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 2 }, 'test');
}

/** One call as customer `customer`, signed with `key` when given, as the query service makes it (no statement check). */
async function call(pool: Pool, sql: string, customer: string, key?: Buffer) {
  const lease = await pool.acquire();
  let failure: unknown;
  try {
    return await lease.connection.execute(sql, [], {
      maxRows: 100,
      timeoutMs: 10_000,
      readOnly: true,
      context: { CUSTOMER_ID: customer },
      ...(key ? { contextKey: key } : {}),
    });
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    lease.release(failure);
  }
}

describe.skipIf(!pgAvailable)('PostgreSQL signed context values: an RLS policy on the verifying function', () => {
  const rls = new RlsFixture({ role: 'hctx_signed', table: 'signed_orders' });
  const schema = `hctx_${process.pid}_${randomBytes(3).toString('hex')}`;
  const key = newContextKey();
  let pool: Pool;
  /** Sets customer 2 for a subquery that reads the table, then puts customer 1 back: the read-back sees 1. */
  let setItBack: string;

  beforeAll(async () => {
    await rls.setUp();
    await rls.admin.query(postgresContextSql({ key, role: rls.role, schema }));
    await rls.admin.query(`DROP POLICY by_customer ON ${rls.table}`);
    await rls.admin.query(
      `CREATE POLICY by_signed_customer ON ${rls.table} USING (customer_id = (SELECT ${schema}.context('customer_id'))::int)`,
    );
    const u = new URL(PG_URL);
    pool = await poolOn(`postgres://${rls.role}:${rls.password}@${u.host}${u.pathname}`);
    setItBack = `SELECT pg_catalog.set_config('mcp.customer_id', '2', true) AS forged, (SELECT string_agg(item, ',') FROM ${rls.table}) AS items, pg_catalog.set_config('mcp.customer_id', '1', true) AS restored`;
  });

  afterAll(async () => {
    await pool?.end();
    await rls.admin?.query(`DROP POLICY IF EXISTS by_signed_customer ON ${rls.table}`).catch(() => {});
    await rls.admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await rls.dispose();
  });

  it('the honest call sees its own rows, and the function answers its value', async () => {
    const rows = await call(pool, rls.select, '1', key);
    expect(rows.rows.map((r) => r.customer_id)).toEqual([1, 1, 1, 1, 1]);
    const fn = await call(pool, `SELECT ${schema}.context('customer_id') AS v, ${schema}.context('CUSTOMER_ID') AS upper`, '3', key);
    expect(fn.rows).toEqual([{ v: '3', upper: '3' }]);
  });

  it('without signing, the function answers NULL and the policy shows nothing', async () => {
    const rows = await call(pool, rls.select, '1');
    expect(rows.rowCount).toBe(0);
  });

  it('a forged value that is set back before the statement ends reads no row under the signed function', async () => {
    const result = await call(pool, setItBack, '1', key);
    // The read-back saw customer 1 again and let the result through; the policy saw no valid value.
    expect(result.rows).toEqual([{ forged: '2', items: null, restored: '1' }]);
  });

  it('a forged value with a signature copied from the same session reads no row', async () => {
    const sql = `SELECT pg_catalog.set_config('mcp.customer_id', '2', true) AS forged, pg_catalog.set_config('mcp.customer_id.sig', pg_catalog.current_setting('mcp.customer_id.sig'), true) AS sig, (SELECT count(*) FROM ${rls.table}) AS n, pg_catalog.set_config('mcp.customer_id', '1', true) AS back`;
    const result = await call(pool, sql, '1', key);
    expect(result.rows[0]).toMatchObject({ forged: '2', n: 0, back: '1' });
    expect(String(result.rows[0]?.sig)).toMatch(/^v1\.[0-9a-f]{16}\.[0-9a-f]{64}$/);
  });

  it("a signature another backend was given does not verify on this one (bound to the backend's pid)", async () => {
    // Two leases at once: two backends. The first's signature for customer 2 is replayed on the second.
    const a = await pool.acquire();
    const b = await pool.acquire();
    try {
      const opts = (customer: string) => ({
        maxRows: 10,
        timeoutMs: 10_000,
        readOnly: true,
        context: { CUSTOMER_ID: customer },
        contextKey: key,
      });
      const stolen = await a.connection.execute(
        `SELECT pg_catalog.current_setting('mcp.customer_id.sig') AS sig, pg_catalog.pg_backend_pid() AS pid`,
        [],
        opts('2'),
      );
      const sig = String(stolen.rows[0]?.sig).replace(/'/g, '');
      const replay = await b.connection.execute(
        `SELECT pg_catalog.pg_backend_pid() AS pid, pg_catalog.set_config('mcp.customer_id', '2', true) AS v, pg_catalog.set_config('mcp.customer_id.sig', '${sig}', true) AS s, (SELECT count(*) FROM ${rls.table}) AS n, pg_catalog.set_config('mcp.customer_id', '1', true) AS back`,
        [],
        opts('1'),
      );
      expect(replay.rows[0]?.pid).not.toBe(stolen.rows[0]?.pid);
      expect(replay.rows[0]).toMatchObject({ v: '2', n: 0, back: '1' });
    } finally {
      a.release();
      b.release();
    }
  });

  it("the agent's role cannot read the key table", async () => {
    await expect(call(pool, `SELECT * FROM ${schema}.context_keys`, '1', key)).rejects.toMatchObject({
      code: 'QUERY_FAILED',
      message: expect.stringContaining('permission denied'),
    });
  });

  it('without the signed function the same set-it-back statement reads the other customer (the gap signing closes)', async () => {
    await rls.admin.query(
      `CREATE POLICY by_setting ON ${rls.table} USING (customer_id = nullif(current_setting('mcp.customer_id', true), '')::int)`,
    );
    try {
      const result = await call(pool, setItBack, '1', key);
      expect(String(result.rows[0]?.items)).toContain('item-2-');
    } finally {
      await rls.admin.query(`DROP POLICY by_setting ON ${rls.table}`);
    }
  });
});
