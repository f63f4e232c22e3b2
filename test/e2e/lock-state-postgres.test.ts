/**
 * Lock-manager state on a connection that separates rows, through the real shim and daemon, in a
 * database whose default isolation is SERIALIZABLE. While another serializable read-write
 * transaction is open, a serializable read takes a predicate lock (SIReadLock) on each tuple an
 * index scan fetches, before row-level security removes it: counting this backend's tuple locks
 * after a `count(*) ... WHERE item = 'x'` tells whether another customer has 'x'. Refused where
 * rows are separated, and the call's transaction there takes no predicate locks at all.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { addShopConnections, createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';
import { scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_locks_${process.pid}`;
const ROLE = `${TAG}_agent`;

const OBJECTS = [
  `ALTER DATABASE ${TAG} SET default_transaction_isolation = 'serializable'`,
  'CREATE EXTENSION amcheck',
  'CREATE TABLE orders (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO orders SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g",
  // Enough rows that the planner scans the index for one item.
  "INSERT INTO orders SELECT 3, 'fill-' || g FROM generate_series(1, 5000) g",
  'CREATE INDEX orders_item ON orders (item)',
  'ANALYZE orders',
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  "CREATE POLICY by_customer ON orders USING (customer_id = nullif(current_setting('mcp.customer_id', true), '')::int)",
  'CREATE TABLE kv (k int)',
  // A person's view over the lock table, as a DBA might leave one for a dashboard.
  'CREATE VIEW my_locks AS SELECT locktype, mode FROM pg_catalog.pg_locks WHERE pid = pg_catalog.pg_backend_pid()',
];

describe.skipIf(!available)('lock state on PostgreSQL where rows are separated', () => {
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  let writer: pg.Client | undefined;
  const { scoped, plain, admin } = scopedAndPlainShims({
    async setUp(home) {
      login = await createPgLogin(ROLE);
      scratch = await scratchPgDatabase(TAG, [...OBJECTS, `GRANT SELECT ON orders, my_locks TO ${ROLE}`]);
      // Ordinary application traffic: a serializable read-write transaction, held open by this test.
      writer = new pg.Client({ connectionString: scratch.url });
      await writer.connect();
      await writer.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
      await writer.query('SELECT count(*) FROM kv');
      const url = login.url(scratch.url);
      await addShopConnections(home, url, login.password);
      await home.ok(['add', '--no-test', '--no-password', 'dba', scratch.url]);
    },
    async dispose() {
      await writer?.end().catch(() => {});
      await scratch?.drop();
      await login?.drop();
    },
    more: { admin: { connection: 'dba' } },
  });

  /** The oracle: this customer's count of `item`, and this backend's tuple predicate locks right after it. */
  const oracle = (item: string) =>
    `SELECT (SELECT count(*) FROM orders WHERE item = '${item}') AS mine,
            (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND mode = 'SIReadLock' AND locktype = 'tuple') AS tuple_locks`;

  const answered = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: Record<string, unknown>[] }).rows;
  };

  it("refuses the lock table after a count, so a hidden row's value is not told apart from a missing one", async () => {
    const present = await scoped.call('run_query', { sql: oracle('item-2-3') });
    const absent = await scoped.call('run_query', { sql: oracle('nothing-here') });
    // Answered, these differ (one tuple lock against none): customer 2's row would show through.
    expect([present.isError, absent.isError], textOf(present)).toEqual([true, true]);
    expect(textOf(present).replace('item-2-3', 'X')).toBe(textOf(absent).replace('nothing-here', 'X'));
    expect(textOf(present)).toContain('(rule: executor-statistics)');
  });

  it.each([
    'SELECT count(*) FROM pg_catalog.pg_locks',
    'SELECT count(*) FROM pg_lock_status()',
    'SELECT pg_blocking_pids(pg_backend_pid())',
    'SELECT pg_safe_snapshot_blocking_pids(pg_backend_pid())',
    'SELECT pg_isolation_test_session_is_blocked(pg_backend_pid(), ARRAY[]::int[])',
    'SELECT count(*) FROM pg_prepared_xacts',
  ])('refuses %s where rows are separated', async (sql) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
  });

  it("the resolve step and sample_rows refuse a person's view over the lock table where rows are separated", async () => {
    const read = await scoped.call('run_query', { sql: 'SELECT * FROM my_locks' });
    expect(read.isError, textOf(read)).toBe(true);
    expect(textOf(read)).toContain('(rule: executor-statistics)');
    const sampled = await scoped.call('sample_rows', { schema: 'public', table: 'my_locks' });
    expect(sampled.isError, textOf(sampled)).toBe(true);
    expect(textOf(sampled)).toContain('(rule: executor-statistics)');
    const kept = await plain.call('run_query', { sql: 'SELECT * FROM my_locks' });
    answered(kept);
  });

  it("a call where rows are separated runs at an isolation level that takes no predicate locks, whatever the database's default", async () => {
    const sql = "SELECT current_setting('transaction_isolation') AS level";
    expect(answered(await scoped.call('run_query', { sql }))).toEqual([{ level: 'repeatable read' }]);
    expect(answered(await plain.call('run_query', { sql }))).toEqual([{ level: 'serializable' }]);
  });

  it('keeps the lock table where no context names are declared (the role reads it as it would in psql)', async () => {
    // No context value: the policy shows this role no row, and the serializable scan locks what it fetched.
    const [present] = answered(await plain.call('run_query', { sql: oracle('item-2-3') }));
    const [absent] = answered(await plain.call('run_query', { sql: oracle('nothing-here') }));
    expect([Number(present?.mine), Number(present?.tuple_locks)]).toEqual([0, 1]);
    expect([Number(absent?.mine), Number(absent?.tuple_locks)]).toEqual([0, 0]);
  });

  it("refuses amcheck's bt_index_parent_check on a read-only connection: it holds a ShareLock that blocks others' writes", async () => {
    const result = await admin.call('run_query', { sql: "SELECT bt_index_parent_check('orders_item')" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/bt_index_parent_check/);
    answered(await admin.call('run_query', { sql: "SELECT bt_index_check('orders_item')" }));
  });
});
