/**
 * Text the agent chose that PostgreSQL plans rather than runs, through the real shim and daemon.
 * Planning runs code: the planner folds an IMMUTABLE function with constant arguments (and prints
 * its value in the plan) and calls a STABLE one to estimate a condition. So explain_query and
 * sample_rows pass the same layers as run_query before the server sees the statement: the
 * statement check with the connection's options, then the resolve step in the same read-only,
 * rolled-back transaction.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { addSignedConnection } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_plan_${process.pid}_${randomBytes(2).toString('hex')}`;
const ROLE = `${TAG}_agent`;
const PASSWORD = randomBytes(12).toString('hex');
const SIGNED_SCHEMA = 'hanactl_ctx';

/** A table of 5 rows for each of customers 1 to 3, each with a note only its customer may see. */
function customerTable(table: string, policy: string): string[] {
  return [
    `CREATE TABLE public.${table} (id int PRIMARY KEY, customer_id int NOT NULL, item text NOT NULL, secret_note text NOT NULL)`,
    `INSERT INTO public.${table} SELECT (c - 1) * 5 + g, c, 'item-' || c || '-' || g, 'note-of-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g`,
    `CREATE INDEX ON public.${table} (item)`,
    `ALTER TABLE public.${table} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY by_customer ON public.${table} USING (customer_id = ${policy})`,
    `GRANT SELECT ON public.${table} TO ${ROLE}`,
  ];
}

describe.skipIf(!available)('every path where PostgreSQL plans agent text passes the statement check and the resolve step', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let plain: ShimHandle;
  let signed: ShimHandle;
  let su: ShimHandle;
  let guarded: ShimHandle;
  const audited = async (): Promise<number> => Number((await scratch?.db.query('SELECT count(*) AS n FROM public.audit_log'))?.rows[0]?.n);

  beforeAll(async () => {
    const admin = await scratchPgDatabase(TAG);
    scratch = admin;
    await admin.db.query(`CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`);
    const u = new URL(admin.url);
    const dblink = `host=${u.hostname} port=${u.port || '5432'} dbname=${TAG} user=${decodeURIComponent(u.username)}`;
    for (const sql of [
      ...customerTable('orders', "nullif(current_setting('mcp.customer_id', true), '')::int"),
      'CREATE EXTENSION dblink',
      'CREATE TABLE public.audit_log (what text)',
      // A lookup helper wrongly marked IMMUTABLE (so it could serve an index expression), with its owner's rights.
      `CREATE FUNCTION public.customer_notes(c int) RETURNS text LANGUAGE sql IMMUTABLE SECURITY DEFINER
         AS $$ SELECT string_agg(secret_note, ',' ORDER BY id) FROM public.orders WHERE customer_id = c $$`,
      `GRANT EXECUTE ON FUNCTION public.customer_notes(int) TO ${ROLE}`,
      // Helpers that write through dblink: folded (IMMUTABLE) or estimated (STABLE) at plan time.
      `CREATE FUNCTION public.tenant_label(c int) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'tenant-' || c ||
         dblink_exec('${dblink}', 'INSERT INTO public.audit_log(what) VALUES (''immutable folded at plan time'')') $$`,
      `CREATE FUNCTION public.stable_audit(m text) RETURNS int LANGUAGE sql STABLE AS $$ SELECT length(dblink_exec(
         '${dblink}', 'INSERT INTO public.audit_log(what) VALUES (' || quote_literal(m) || ')')) $$`,
      // A person's view over the executor's statistics, as a DBA might leave it for a dashboard.
      'CREATE VIEW public.table_io AS SELECT relname, idx_tup_fetch, seq_tup_read FROM pg_catalog.pg_stat_user_tables',
      `GRANT SELECT ON public.table_io TO ${ROLE}`,
    ])
      await admin.db.query(sql);

    const agentUrl = `postgres://${ROLE}@${u.host}/${TAG}`;
    await home.ok(['add', '--no-test', 'plain', agentUrl, '--password-stdin', '--context', 'customer_id'], { input: PASSWORD });
    await admin.db.query(await addSignedConnection(home, agentUrl, PASSWORD, SIGNED_SCHEMA));
    for (const sql of customerTable('orders_s', `(SELECT ${SIGNED_SCHEMA}.context('customer_id'))::int`)) await admin.db.query(sql);
    await home.ok(['add', '--no-test', '--no-password', 'su', admin.url]);
    await home.ok(['add', '--no-test', '--no-password', 'guarded', admin.url]);
    await home.ok(['set', 'guarded', '--max-cost', '1000000']);

    plain = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'plain']);
    signed = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'signed']);
    su = await startShim(home.env, ['--connection', 'su']);
    guarded = await startShim(home.env, ['--connection', 'guarded']);
  });

  afterAll(async () => {
    await plain?.close();
    await signed?.close();
    await su?.close();
    await guarded?.close();
    await home.dispose();
    await scratch?.drop();
    // The role is the cluster's: dropped once the database holding its grants is gone.
    await asPgSuperuser([`DROP ROLE IF EXISTS ${ROLE}`], { ignoreErrors: true });
  });

  it.each([
    ['plain', 'orders'],
    ['signed', 'orders_s'],
  ])(
    "explain_query on the %s context connection refuses a person's IMMUTABLE SECURITY DEFINER function, showing none of its value",
    async (which, table) => {
      const shim = which === 'plain' ? plain : signed;
      // The caller is customer 1, and sees its own rows only.
      const own = await shim.call('run_query', { sql: `SELECT count(*)::int AS n FROM ${table}` });
      expect(own.structuredContent).toMatchObject({ rows: [{ n: 5 }] });
      const result = await shim.call('explain_query', { sql: `SELECT * FROM ${table} WHERE item = customer_notes(2)` });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: customer_notes\(\) is a SECURITY DEFINER function/);
      expect(textOf(result)).not.toMatch(/note-of-/);
    },
  );

  it.each([
    ['SELECT tenant_label(1)', /tenant_label\(\) calls dblink_exec\(\)/],
    ["SELECT * FROM orders WHERE id < stable_audit('stable estimated at plan time')", /stable_audit\(\) calls dblink_exec\(\)/],
  ])('explain_query on a read-only superuser connection refuses %s, and nothing is written', async (sql, message) => {
    expect(await audited()).toBe(0);
    const ran = await su.call('run_query', { sql });
    expect(ran.isError, textOf(ran)).toBe(true);
    const result = await su.call('explain_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await audited()).toBe(0);
  });

  it.each([
    ['SELECT tenant_label(1)', /tenant_label\(\) calls dblink_exec\(\)/],
    ["SELECT * FROM orders WHERE id < stable_audit('stable estimated by the cost guard')", /stable_audit\(\) calls dblink_exec\(\)/],
  ])("run_query under a cost limit resolves %s before the guard's EXPLAIN plans it, and nothing is written", async (sql, message) => {
    const result = await guarded.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await audited()).toBe(0);
  });

  it('explain_query where rows are separated judges the statement as run_query does there (the executor statistics)', async () => {
    // The planner calls a STABLE function to estimate the condition: the plan it picks follows the counter.
    const sql = "SELECT * FROM orders WHERE id < pg_stat_get_tuples_fetched('orders'::regclass)";
    for (const tool of ['run_query', 'explain_query']) {
      const result = await plain.call(tool, { sql });
      expect(result.isError, `${tool}: ${textOf(result)}`).toBe(true);
      expect(textOf(result)).toContain('(rule: executor-statistics)');
    }
    const kept = await su.call('explain_query', { sql });
    expect(kept.isError, textOf(kept)).toBeFalsy();
  });

  it("sample_rows where rows are separated refuses a person's view over the executor statistics, as run_query does", async () => {
    const ran = await plain.call('run_query', { sql: 'SELECT * FROM table_io' });
    expect(ran.isError, textOf(ran)).toBe(true);
    const result = await plain.call('sample_rows', { table: 'table_io' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
    const kept = await su.call('sample_rows', { table: 'table_io' });
    expect(kept.isError, textOf(kept)).toBeFalsy();
  });

  it('still explains and samples ordinary statements, with figures only where rows are not separated', async () => {
    for (const shim of [plain, signed]) {
      const result = await shim.call('explain_query', { sql: "SELECT * FROM orders WHERE item = 'item-1-1'" });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toContain('orders');
      expect(textOf(result)).not.toMatch(/cost=|rows=/);
    }
    const figures = await su.call('explain_query', { sql: 'SELECT * FROM orders WHERE id < 3;' });
    expect(figures.isError, textOf(figures)).toBeFalsy();
    expect(textOf(figures)).toMatch(/cost=/);
    const sample = await plain.call('sample_rows', { table: 'orders' });
    expect(sample.isError, textOf(sample)).toBeFalsy();
    expect((sample.structuredContent as { rows: { customer_id: number }[] }).rows.every((r) => r.customer_id === 1)).toBe(true);
    expect(await audited()).toBe(0);
  });
});
