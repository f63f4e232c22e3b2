/**
 * A person's function whose code the resolve step cannot judge before it runs, through the real
 * shim, daemon and PostgreSQL: PL/pgSQL that EXECUTEs text (its argument, a built string, even a
 * constant), a body that runs a DO block, and functions in languages whose bodies hanactl does not
 * read (PL/Perl where the server has it, C, `internal` pointing at a refused built-in). Such a
 * function runs whatever text it is handed: written directly, each statement below is refused.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPgSuperuser, PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_dyn_${process.pid}`;
const ROLE = `hdyn_${process.pid}`;
const PASSWORD = randomBytes(12).toString('hex');

/** True when the server can load PL/Perl (optional on a developer's machine; CI installs it). */
async function hasPlperl(): Promise<boolean> {
  if (!available) return false;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    const { rows } = await admin.query("SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'plperl'");
    // CI installs it (.ci/run): there, a server without it is a failure, not a skip.
    if (rows.length === 0 && process.env.CI) throw new Error('PL/Perl is not available on the PostgreSQL server in CI (postgresql-plperl)');
    return rows.length > 0;
  } finally {
    await admin.end();
  }
}
const plperl = await hasPlperl();

const OBJECTS = [
  `CREATE ROLE ${ROLE} LOGIN PASSWORD '${PASSWORD}'`,
  'CREATE TABLE public.orders (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO public.orders SELECT c, 'item-' || c FROM generate_series(1, 3) c",
  'ALTER TABLE public.orders ENABLE ROW LEVEL SECURITY',
  "CREATE POLICY by_customer ON public.orders USING (customer_id = nullif(current_setting('mcp.customer_id', true), '')::int)",
  `GRANT SELECT ON public.orders TO ${ROLE}`,
  // The helpers people write: each runs the text it is given, or builds one.
  'CREATE FUNCTION public.exec_sql(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE q; END $$',
  "CREATE FUNCTION public.run_report(q text) RETURNS SETOF json LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY EXECUTE 'SELECT row_to_json(t) FROM (' || q || ') t'; END $$",
  'CREATE FUNCTION public.exec_for(q text) RETURNS int LANGUAGE plpgsql AS $$ DECLARE r record; n int := 0; BEGIN FOR r IN ExEcUtE q LOOP n := n + 1; END LOOP; RETURN n; END $$',
  'CREATE FUNCTION public.exec_open(q text) RETURNS int LANGUAGE plpgsql AS $$ DECLARE c refcursor; BEGIN OPEN c FOR EXECUTE q; CLOSE c; RETURN 1; END $$',
  "CREATE FUNCTION public.exec_const() RETURNS int LANGUAGE plpgsql AS $$ DECLARE n int; BEGIN EXECUTE 'SELECT 1' INTO n; RETURN n; END $$",
  "CREATE FUNCTION public.exec_do() RETURNS void LANGUAGE plpgsql AS $$ BEGIN DO 'BEGIN EXECUTE current_setting(''app.q''); END'; END $$",
  "CREATE FUNCTION public.exec_hidden(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM '--'; EXECUTE q; END $$",
  "CREATE FUNCTION public.exec_escaped(q text) RETURNS void LANGUAGE plpgsql AS $$ BEGIN PERFORM E'x\\''; EXECUTE q; PERFORM 'y'; END $$",
  'CREATE FUNCTION public.wrap(q text) RETURNS void LANGUAGE sql AS $$ SELECT public.exec_sql(q) $$',
  'CREATE VIEW public.v_exec AS SELECT public.exec_const() AS n',
  // The same function reached by the other routes: an operator, a domain's CHECK, a default
  // argument, and a trigger a write fires.
  'CREATE OPERATOR public.!!! (rightarg = text, function = public.exec_sql)',
  'CREATE DOMAIN public.dexec AS int CHECK (public.exec_const() = 1)',
  "CREATE FUNCTION public.fdef(x int DEFAULT public.exec_const()) RETURNS int LANGUAGE sql AS 'SELECT x'",
  'CREATE TABLE public.notes (body text)',
  'CREATE FUNCTION public.note_trigger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN EXECUTE NEW.body; RETURN NEW; END $$',
  'CREATE TRIGGER note_run BEFORE INSERT ON public.notes FOR EACH ROW EXECUTE FUNCTION public.note_trigger()',
  'CREATE TABLE public.plain_notes (body text)',
  `GRANT SELECT ON public.v_exec TO ${ROLE}`,
  // What the walk cannot read: a C function (here the symbol of a library the server ships,
  // standing for any C function a person built) and an internal function over a refused built-in.
  "CREATE FUNCTION public.c_handler() RETURNS fdw_handler LANGUAGE c AS '$libdir/postgres_fdw', 'postgres_fdw_handler'",
  "CREATE FUNCTION public.quiet_cancel(int) RETURNS boolean LANGUAGE internal STRICT AS 'pg_cancel_backend'",
  ...(plperl
    ? [
        'CREATE EXTENSION plperl',
        'CREATE FUNCTION public.perl_run(q text) RETURNS int LANGUAGE plperl AS $$ spi_exec_query($_[0]); return 1; $$',
      ]
    : []),
  // Ordinary PL/pgSQL: the word in a comment, a string and a quoted name is not the keyword.
  `CREATE FUNCTION public.plain_pl(n int) RETURNS text LANGUAGE plpgsql AS $$
   DECLARE "execute" int := n; -- we never execute text here; do nothing /* either
   BEGIN
     /* nor EXECUTE here */
     RETURN 'execute ' || "execute" || (SELECT count(*) FROM public.orders);
   END $$`,
];

describe.skipIf(!available)('run_query refuses code the resolve step cannot judge before it runs', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let scoped: ShimHandle;
  let su: ShimHandle;
  let writer: ShimHandle;
  let victim: VictimSession | undefined;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    const url = new URL(scratch.url);
    await home.ok(['add', '--no-test', '--no-password', 'dynsu', scratch.url]);
    await home.ok(['add', '--no-test', '--no-password', '--allow-write', 'dynw', scratch.url]);
    await home.ok(
      ['add', '--no-test', 'dynctx', `postgres://${ROLE}@${url.host}${url.pathname}`, '--password-stdin', '--context', 'customer_id'],
      { input: PASSWORD },
    );
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'dynctx']);
    su = await startShim(home.env, ['--connection', 'dynsu']);
    writer = await startShim(home.env, ['--connection', 'dynw']);
  });

  afterAll(async () => {
    await victim?.end();
    await scoped?.close();
    await su?.close();
    await writer?.close();
    await home.dispose();
    await scratch?.drop();
    await asPgSuperuser([`DROP ROLE IF EXISTS ${ROLE}`], { ignoreErrors: true });
  });

  /** The running statement of the role's other session, once the server shows it active. */
  async function runningVictim(): Promise<{ pid: number; done: Promise<unknown> }> {
    const url = new URL(scratch?.url ?? '');
    url.username = ROLE;
    url.password = PASSWORD;
    victim = await VictimSession.open(url.toString());
    return { pid: victim.pid, ...(await victim.running(scratch!.db)) };
  }

  it("does not end another caller's running statement through exec_sql, literal or bound", async () => {
    const { pid, done } = await runningVictim();
    const kill = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = current_user AND pid <> pg_backend_pid() AND state = 'active'`;
    const literal = await scoped.call('run_query', { sql: `SELECT exec_sql('${kill.replaceAll("'", "''")}')` });
    const bound = await scoped.call('run_query', { sql: 'SELECT exec_sql($1)', params: [kill] });
    for (const result of [literal, bound]) {
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: exec_sql\(\) runs SQL text its body chooses when it runs/);
    }
    // Still running: it ends on our cancel, not by a termination from the call above.
    const { rows } = await scratch!.db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid]);
    expect(rows).toHaveLength(1);
    await scratch!.db.query('SELECT pg_cancel_backend($1)', [pid]);
    expect(await done).toBe('57014');
  });

  it('refuses RETURN QUERY EXECUTE reading the statistics where rows are separated', async () => {
    const result = await scoped.call('run_query', {
      sql: "SELECT * FROM run_report('SELECT relname, idx_tup_fetch FROM pg_stat_user_tables')",
    });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: run_report\(\) runs SQL text/);
    expect(textOf(result)).toContain('(rule: dynamic-sql)');
  });

  it.each([
    ["SELECT exec_sql('SELECT pg_reload_conf()')", /Refused: exec_sql\(\) runs SQL text/],
    ["SELECT exec_for('SELECT pg_cancel_backend(0)')", /Refused: exec_for\(\) runs SQL text/],
    ["SELECT exec_open('SELECT pg_cancel_backend(0)')", /Refused: exec_open\(\) runs SQL text/],
    ['SELECT exec_const()', /Refused: exec_const\(\) runs SQL text/],
    ['SELECT exec_do()', /Refused: exec_do\(\) runs SQL text/],
    ["SELECT exec_hidden('SELECT pg_reload_conf()')", /Refused: exec_hidden\(\) runs SQL text/],
    ["SELECT exec_escaped('SELECT pg_reload_conf()')", /Refused: exec_escaped\(\) runs SQL text/],
    ["SELECT wrap('SELECT pg_reload_conf()')", /Refused: wrap\(\) calls exec_sql\(\), whose body runs SQL text/],
    ['SELECT n FROM v_exec', /Refused: .*v_exec.* calls exec_const\(\), whose body runs SQL text/],
    ["SELECT !!! 'SELECT pg_reload_conf()'", /Refused: operator !!! calls exec_sql\(\), whose body runs SQL text/],
    ['SELECT 1::dexec', /Refused: type dexec calls exec_const\(\), whose body runs SQL text/],
    ['SELECT fdef()', /Refused: fdef\(\) calls exec_const\(\), whose body runs SQL text/],
    ['SELECT c_handler() IS NULL', /Refused: c_handler\(\) is written in c, which hanactl cannot read/],
    ['SELECT quiet_cancel(0)', /Refused: quiet_cancel\(\) calls pg_cancel_backend\(\)/],
  ])('refuses %s on a read-only superuser connection', async (sql, message) => {
    const result = await su.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('refuses a write whose trigger runs the text written, and still writes a table without one', async () => {
    const refused = await writer.call('run_query', { sql: "INSERT INTO notes VALUES ('SELECT pg_reload_conf()')" });
    expect(refused.isError, textOf(refused)).toBe(true);
    expect(textOf(refused)).toMatch(/Refused: .*notes.* calls note_trigger\(\), whose body runs SQL text/);
    const written = await writer.call('run_query', { sql: "INSERT INTO plain_notes VALUES ('SELECT 1')" });
    expect(written.isError, textOf(written)).toBeFalsy();
    const { rows } = await scratch!.db.query(
      'SELECT (SELECT count(*) FROM public.notes)::int AS n, (SELECT count(*) FROM public.plain_notes)::int AS p',
    );
    expect(rows).toEqual([{ n: 0, p: 1 }]);
  });

  it.skipIf(!plperl)('refuses a PL/Perl function, naming its language', async () => {
    const result = await su.call('run_query', { sql: "SELECT perl_run('SELECT pg_reload_conf()')" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: perl_run\(\) is written in plperl, which hanactl cannot read/);
    expect(textOf(result)).toContain('(rule: opaque-function)');
  });

  it('still answers an ordinary PL/pgSQL function that mentions the word outside its code', async () => {
    for (const shim of [su, scoped]) {
      const result = await shim.call('run_query', { sql: 'SELECT plain_pl(7) AS t' });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ t: shim === su ? 'execute 73' : 'execute 71' }] });
    }
  });
});
