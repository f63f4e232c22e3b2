import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_hidden_${process.pid}`;
const ROLE = `hanactl_hidden_agent_${process.pid}`;
const AUDITORS = `hanactl_hidden_auditors_${process.pid}`;
const PASSWORD = randomBytes(12).toString('hex');

/** A conninfo back into the scratch database as the server's own user: what a person's audit helper writes through. */
function loopback(): string {
  const u = new URL(PG_URL);
  return `dbname=${TAG} host=${u.hostname} port=${u.port || '5432'} user=${decodeURIComponent(u.username) || 'postgres'}`;
}

/** The recipe's own policy: the rows of the customer in mcp.customer_id. */
const RECIPE = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

/**
 * Code the server runs for a statement that never names it: a row-level-security policy calling a
 * person's audit helper, which commits a row through dblink_exec on every read (the helper is
 * SECURITY DEFINER, the other calls dblink_exec itself), and one calling a refused built-in.
 */
function objects(): string[] {
  return [
    'CREATE EXTENSION dblink',
    'CREATE TABLE public.audit_log (what text)',
    `CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`,
    `CREATE FUNCTION public.audit_read_sd(c int) RETURNS boolean LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_catalog
       AS $$ SELECT dblink_exec('${loopback()}', 'INSERT INTO audit_log(what) VALUES (''read ' || c || ''')') IS NOT NULL $$`,
    `CREATE FUNCTION public.audit_read(c int) RETURNS boolean LANGUAGE sql
       AS $$ SELECT dblink_exec('${loopback()}', 'INSERT INTO audit_log(what) VALUES (''read ' || c || ''')') IS NOT NULL $$`,
    'CREATE TABLE public.tickets (id int, customer_id int, body text)',
    "INSERT INTO public.tickets VALUES (1, 1, 't1'), (2, 2, 't2')",
    'ALTER TABLE public.tickets ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY p ON public.tickets USING (${RECIPE} AND public.audit_read_sd(customer_id))`,
    'CREATE VIEW public.tickets_v WITH (security_invoker = true) AS SELECT * FROM public.tickets',
    'CREATE TABLE public.notes2 (id int, body text)',
    "INSERT INTO public.notes2 VALUES (1, 'n1')",
    'ALTER TABLE public.notes2 ENABLE ROW LEVEL SECURITY',
    'CREATE POLICY p2 ON public.notes2 USING (public.audit_read(id))',
    'CREATE TABLE public.locked (id int, customer_id int)',
    'INSERT INTO public.locked VALUES (1, 1)',
    'ALTER TABLE public.locked ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY p3 ON public.locked USING (${RECIPE} AND pg_catalog.pg_try_advisory_lock(7))`,
    'CREATE TABLE public.written (id int, customer_id int)',
    'ALTER TABLE public.written ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY r ON public.written FOR SELECT USING (${RECIPE})`,
    `CREATE POLICY w ON public.written FOR INSERT WITH CHECK (${RECIPE} AND public.audit_read_sd(customer_id))`,
    'CREATE TABLE public.orders (id int, customer_id int, item text)',
    "INSERT INTO public.orders SELECT g, c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 2) g",
    'ALTER TABLE public.orders ENABLE ROW LEVEL SECURITY',
    `CREATE POLICY by_customer ON public.orders USING (${RECIPE})`,
    // Functions whose SET clauses change the rights or the context they run with.
    `CREATE ROLE ${AUDITORS} NOLOGIN BYPASSRLS`,
    `GRANT SELECT ON public.orders TO ${AUDITORS}`,
    `GRANT ${AUDITORS} TO ${ROLE}`,
    `CREATE FUNCTION public.order_count_all() RETURNS bigint LANGUAGE sql SET role = ${AUDITORS} AS $$ SELECT count(*) FROM public.orders $$`,
    "CREATE FUNCTION public.orders_of_two() RETURNS bigint LANGUAGE sql SET mcp.customer_id = '2' AS $$ SELECT count(*) FROM public.orders $$",
    'CREATE FUNCTION public.orders_unchecked() RETURNS bigint LANGUAGE plpgsql SET row_security = off AS $$ BEGIN RETURN (SELECT count(*) FROM public.orders); END $$',
    "CREATE FUNCTION public.order_count() RETURNS bigint LANGUAGE sql STABLE SET search_path = public, pg_catalog SET work_mem = '8MB' AS $$ SELECT count(*) FROM orders $$",
    'CREATE VIEW public.all_counts WITH (security_invoker = true) AS SELECT public.order_count_all() AS n',
    // Operators and domains a text body uses: symbols and casts, not words of a relation or function.
    `CREATE FUNCTION public.log_op(a text, b text) RETURNS text LANGUAGE sql
       AS $$ SELECT dblink_exec('${loopback()}', 'INSERT INTO audit_log(what) VALUES (' || quote_literal(a || '/' || b) || ')') $$`,
    'CREATE OPERATOR public.==> (leftarg = text, rightarg = text, function = public.log_op)',
    "CREATE FUNCTION public.report_op() RETURNS text LANGUAGE sql AS $$ SELECT 'via-sql-body' ==> 'op' $$",
    "CREATE FUNCTION public.report_op_pl() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'via-plpgsql-body' OPERATOR(public.==>) 'op'; END $$",
    `CREATE FUNCTION public.log_check(t text) RETURNS boolean LANGUAGE sql
       AS $$ SELECT dblink_exec('${loopback()}', 'INSERT INTO audit_log(what) VALUES (' || quote_literal('domain ' || t) || ')') IS NOT NULL $$`,
    'CREATE DOMAIN public.audited_text AS text CHECK (public.log_check(VALUE))',
    "CREATE FUNCTION public.f_dom() RETURNS text LANGUAGE sql AS $$ SELECT ('via-body'::audited_text)::text $$",
    'CREATE TYPE public.tag AS (a text)',
    "CREATE FUNCTION public.tag_to_text(t public.tag) RETURNS text LANGUAGE sql AS $$ SELECT public.log_op('cast', (t).a) $$",
    'CREATE CAST (public.tag AS text) WITH FUNCTION public.tag_to_text(public.tag)',
    "CREATE FUNCTION public.f_cast() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN CAST(ROW('via-cast')::tag AS text); END $$",
    // Another customer's rows through an owner-rights view, reached by an operator in a body.
    'CREATE VIEW public.order_overview AS SELECT customer_id, item FROM public.orders',
    "CREATE FUNCTION public.notes_of(c int, n int) RETURNS text LANGUAGE sql STABLE AS $$ SELECT string_agg(item, ',') FROM public.order_overview WHERE customer_id = c $$",
    'CREATE OPERATOR public.#> (leftarg = int, rightarg = int, function = public.notes_of)',
    'CREATE FUNCTION public.customer_summary(c int) RETURNS text LANGUAGE sql STABLE AS $$ SELECT c #> 5 $$',
    `GRANT SELECT ON public.order_overview TO ${ROLE}`,
    `GRANT SELECT ON public.tickets, public.tickets_v, public.notes2, public.locked, public.orders, public.all_counts TO ${ROLE}`,
    `GRANT SELECT, INSERT ON public.written TO ${ROLE}`,
    `GRANT EXECUTE ON FUNCTION public.audit_read_sd(int), public.audit_read(int) TO ${ROLE}`,
  ];
}

describe.skipIf(!available)('the resolve step follows code the server runs for a relation the statement names', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let plain: ShimHandle;
  let writer: ShimHandle;
  let su: ShimHandle;

  const audited = async (): Promise<number> =>
    Number((await scratch?.db.query('SELECT count(*)::int AS n FROM public.audit_log'))?.rows[0]?.n);

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, objects());
    const u = new URL(PG_URL);
    const url = `postgres://${ROLE}@${u.host}/${TAG}`;
    await home.ok(['add', '--no-test', 'agent', url, '--password-stdin', '--context', 'customer_id'], { input: PASSWORD });
    await home.ok(['add', '--no-test', 'agentw', url, '--password-stdin', '--context', 'customer_id', '--allow-write'], {
      input: PASSWORD,
    });
    plain = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'agent']);
    writer = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'agentw']);
    await home.ok(['add', '--no-test', '--no-password', 'su', scratch.url]);
    su = await startShim(home.env, ['--connection', 'su']);
  });

  afterAll(async () => {
    await plain?.close();
    await writer?.close();
    await su?.close();
    await home.dispose();
    await scratch?.drop();
    const admin = await scratchAdmin();
    await admin.query(`DROP ROLE IF EXISTS ${ROLE}`).catch(() => {});
    await admin.query(`DROP ROLE IF EXISTS ${AUDITORS}`).catch(() => {});
    await admin.end();
  });

  it.each([
    ['SELECT * FROM tickets', /Refused: .*tickets.* calls audit_read_sd\(\), a SECURITY DEFINER function/],
    ['SELECT * FROM tickets_v', /Refused: .*tickets_v.* calls audit_read_sd\(\), a SECURITY DEFINER function/],
    ['SELECT count(*) FROM notes2', /Refused: .*notes2.* calls dblink_exec\(\)/],
    ['SELECT * FROM locked', /Refused: .*locked.* calls pg_try_advisory_lock\(\)/],
  ])('refuses %s, and the policy never runs', async (sql, message) => {
    const before = await audited();
    const result = await plain.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await audited()).toBe(before);
  });

  it('refuses sample_rows of a table whose policy calls a SECURITY DEFINER function', async () => {
    const before = await audited();
    const result = await plain.call('sample_rows', { schema: 'public', table: 'tickets' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*tickets.* calls audit_read_sd\(\)/);
    expect(await audited()).toBe(before);
  });

  it("refuses a write whose policy's WITH CHECK calls a SECURITY DEFINER function", async () => {
    const before = await audited();
    const result = await writer.call('run_query', { sql: 'INSERT INTO written VALUES (3, 1)' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*written.* calls audit_read_sd\(\)/);
    expect(await audited()).toBe(before);
    const rows = await scratch?.db.query('SELECT count(*)::int AS n FROM public.written');
    expect(rows?.rows[0]?.n).toBe(0);
  });

  it.each([
    ['SELECT order_count_all()', /Refused: order_count_all\(\) sets role when it runs/],
    ['SELECT * FROM all_counts', /Refused: .*all_counts.* calls order_count_all\(\), which sets role when it runs/],
    ['SELECT orders_of_two()', /Refused: orders_of_two\(\) sets mcp\.customer_id when it runs/],
    ['SELECT orders_unchecked()', /Refused: orders_unchecked\(\) sets row_security when it runs/],
  ])('refuses %s, a function that runs with other settings than the call', async (sql, message) => {
    const result = await plain.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).not.toMatch(/\b6\b rows?|"n": ?6/);
  });

  it.each([
    ['SELECT report_op()', /Refused: report_op\(\) calls dblink_exec\(\)/],
    ['SELECT report_op_pl()', /Refused: report_op_pl\(\) calls dblink_exec\(\)/],
    ['SELECT f_dom()', /Refused: f_dom\(\) calls dblink_exec\(\)/],
    ['SELECT f_cast()', /Refused: f_cast\(\) calls dblink_exec\(\)/],
  ])('refuses %s, whose body reaches dblink_exec through an operator, a cast or a domain, and nothing is written', async (sql, message) => {
    const before = await audited();
    const result = await su.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(await audited()).toBe(before);
  });

  it("refuses an operator in a body that reads another customer's rows with the view owner's rights", async () => {
    const result = await plain.call('run_query', { sql: 'SELECT customer_summary(2) AS s' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*order_overview/);
    expect(textOf(result)).not.toMatch(/item-2/);
  });

  it('still answers a function that sets only its search_path and memory', async () => {
    const result = await plain.call('run_query', { sql: 'SELECT order_count() AS n' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ n: 2 }] });
  });

  it("still answers a table under the recipe's own policy", async () => {
    const result = await plain.call('run_query', { sql: 'SELECT customer_id, item FROM orders ORDER BY id' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      rows: [
        { customer_id: 1, item: 'item-1-1' },
        { customer_id: 1, item: 'item-1-2' },
      ],
    });
  });
});

async function scratchAdmin() {
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  return admin;
}
