/**
 * Where rows are separated, PostgreSQL runs the row-security policy before any condition of the
 * agent's on the same scan, whatever the statement check let through. The planner may put a
 * condition it counts as leakproof and cheap ahead of the policy (order_qual_clauses: leakproof
 * and costing under 10 × cpu_operator_cost); a call whose rows are separated plans with
 * cpu_operator_cost = 0, under which no condition qualifies. Each statement below is an error
 * oracle on a hidden row when planned with the server's defaults (the suite checks that first):
 * through the driver, where no statement check runs, it answers the same whatever the hidden
 * row holds.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecuteOptions } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_polfirst_${process.pid}`;

/** Conditions that fail only when reached; `GUESS` is what the caller guesses a hidden note starts with. */
const ORACLES = [
  "SELECT id FROM orders WHERE CASE WHEN note ^@ 'GUESS' THEN (SELECT true LIMIT -1) ELSE true END",
  "SELECT id FROM orders WHERE CASE WHEN note ^@ 'GUESS' THEN (SELECT true OFFSET -1) ELSE true END",
  "SELECT id FROM orders WHERE CASE WHEN note ^@ 'GUESS' THEN EXISTS (SELECT FROM pg_catalog.pg_class LIMIT -1) ELSE true END",
  "SELECT id FROM orders WHERE CASE WHEN note ^@ 'GUESS' THEN has_table_privilege('nope', 'select') ELSE true END",
  "SELECT o.id FROM (SELECT 'nope'::text AS x) v, orders o WHERE CASE WHEN o.note ^@ 'GUESS' THEN has_table_privilege(v.x, 'select') ELSE true END",
  "WITH v AS (SELECT 'nope'::text AS x) SELECT o.id FROM v, orders o WHERE CASE WHEN o.note ^@ 'GUESS' THEN has_table_privilege(v.x, 'select') ELSE true END",
  "SELECT (SELECT count(*) FROM orders AS o(id, customer_id, n2) WHERE CASE WHEN o.n2 ^@ 'GUESS' THEN has_table_privilege(note, 'select') ELSE true END) FROM (VALUES ('nope')) AS v(note)",
  "SELECT id FROM leaky_v WHERE CASE WHEN note ^@ 'GUESS' THEN ok ELSE true END",
];

const OBJECTS = (agent: string) => [
  'CREATE TABLE orders (id int, customer_id text, note text)',
  "INSERT INTO orders VALUES (1, 'A', 'mine-A'), (2, 'B', 'hidden-note-B')",
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  "CREATE POLICY by_customer ON orders USING (customer_id = NULLIF(pg_catalog.current_setting('mcp.customer_id', true), ''))",
  "CREATE VIEW leaky_v WITH (security_invoker) AS SELECT id, note, customer_id, has_table_privilege('nope', 'select') AS ok FROM orders",
  `GRANT SELECT ON orders, leaky_v TO ${agent}`,
];

describe.skipIf(!available)('PostgreSQL: the policy runs first where rows are separated', { timeout: 120_000 }, () => {
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  let pool: Pool;

  beforeAll(async () => {
    login = await createPgLogin(`${TAG}_agent`);
    scratch = await scratchPgDatabase(TAG, OBJECTS(login.name));
    const { target, password } = parseConnectionUrl(login.urlWithPassword(scratch.url));
    const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
    pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 1 }, 'test');
  });

  afterAll(async () => {
    await pool?.end();
    await scratch?.drop();
    await login?.drop();
  });

  /** The call's answer, or its error's message. */
  async function call(sql: string, options: Partial<ExecuteOptions>): Promise<unknown> {
    const lease = await pool.acquire();
    let failure: unknown;
    try {
      return (await lease.connection.execute(sql, [], { maxRows: 100, timeoutMs: 10_000, readOnly: true, ...options })).rows;
    } catch (err) {
      failure = err;
      return `error: ${(err as Error).message}`;
    } finally {
      lease.release(failure);
    }
  }

  /** The same statement on the login's own session, planned with the server's defaults. */
  async function bare(sql: string): Promise<string> {
    const client = new pg.Client({ connectionString: login?.urlWithPassword(scratch?.url ?? '') });
    await client.connect();
    try {
      await client.query('BEGIN READ ONLY');
      await client.query("SET LOCAL mcp.customer_id = 'A'");
      await client.query(sql);
      return 'answered';
    } catch (err) {
      return `error: ${(err as Error).message}`;
    } finally {
      await client.end();
    }
  }

  it.each(ORACLES)('is an oracle with the defaults: %s', async (sql) => {
    expect(await bare(sql.replaceAll('GUESS', 'hidden'))).toMatch(/^error: /);
    expect(await bare(sql.replaceAll('GUESS', 'zzz'))).toBe('answered');
  });

  it.each(['read-only', 'writable'])('answers the same whatever a hidden row holds, %s', async (mode) => {
    const options = { separated: true, readOnly: mode === 'read-only', context: { CUSTOMER_ID: 'A' } };
    for (const sql of ORACLES) {
      const hit = await call(sql.replaceAll('GUESS', 'hidden'), options);
      const miss = await call(sql.replaceAll('GUESS', 'zzz'), options);
      expect(hit, sql).toEqual(miss);
    }
  });

  it('still answers the caller its own rows, with the policy applied', async () => {
    const options = { separated: true, readOnly: true, context: { CUSTOMER_ID: 'A' } };
    expect(await call('SELECT id, note FROM orders ORDER BY id', options)).toEqual([{ id: 1, note: 'mine-A' }]);
    expect(await call("SELECT count(*)::int AS n FROM orders WHERE note ^@ 'hidden'", options)).toEqual([{ n: 0 }]);
  });
});
