/**
 * A type named like a function call: where no function of that name fits, PostgreSQL reads
 * `name(x)` (quoted, qualified, the array type's `_name`, attribute notation `(x).name`) as a
 * conversion to type `name`, and runs the type's own code: here a domain's CHECK that writes a
 * file on the database host, ends another session and resets a table's statistics. Through the
 * real shim, daemon and PostgreSQL on a read-only superuser connection, each form is refused and
 * nothing happens; on a connection with context names too. Built-in conversions by call syntax
 * and a person's type with no code still answer.
 */
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { loginDatabase, VictimSession } from '../helpers/pg-sessions.js';
import { TYPE_CALL_FORMS, typeCallObjects } from '../helpers/type-calls.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_typecall_${process.pid}`;
const AGENT = `${TAG}_agent`;
const FILE = `/tmp/${TAG}_pwned.txt`;

const OBJECTS = [
  'CREATE TABLE public.victim (pid int)',
  'CREATE TABLE public.counted (id int)',
  'INSERT INTO public.counted SELECT g FROM generate_series(1, 10) g',
  ...typeCallObjects(`CREATE FUNCTION public.evil(int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN
     COPY (SELECT 1) TO '${FILE}';
     PERFORM pg_catalog.pg_terminate_backend(v.pid) FROM public.victim v;
     PERFORM pg_catalog.pg_stat_reset_single_table_counters('public.counted'::pg_catalog.regclass);
     RETURN true; END $$`),
  `GRANT USAGE ON SCHEMA s TO ${AGENT}`,
];

/** What the walk meets first in the CHECK's function: the COPY, or a built-in refused on a read-only connection. */
const REFUSED = /Refused: .*(runs COPY|calls pg_terminate_backend\(\)|calls pg_stat_reset_single_table_counters\(\))/;

describe.skipIf(!available)('a type named like a function call, whose code the conversion runs', { timeout: 300_000 }, () => {
  const { home, login, scratch } = loginDatabase(AGENT, TAG, OBJECTS);
  let su: ShimHandle;
  let scoped: ShimHandle;
  let victim: VictimSession | undefined;

  /** The table's sequential scans as the statistics hold them. */
  const scans = async (): Promise<number> => {
    const { rows } = await scratch().db.query(
      "SELECT seq_scan::int AS n FROM pg_stat_user_tables WHERE relid = 'public.counted'::regclass",
    );
    return Number(rows[0]?.n ?? 0);
  };

  beforeAll(async () => {
    rmSync(FILE, { force: true });
    const { db, url } = scratch();
    victim = await VictimSession.open(url);
    await db.query('INSERT INTO public.victim VALUES ($1)', [victim.pid]);
    // Statistics to lose: scans the session reports once it is idle (flushed at once, not on its timer).
    await db.query('SELECT count(*) FROM public.counted');
    await db.query('SELECT pg_stat_force_next_flush()');
    while ((await scans()) === 0) await db.query('SELECT pg_stat_force_next_flush()');
    await home.ok(['add', '--no-test', '--no-password', 'tcsu', url]);
    await home.ok(['add', '--no-test', 'tcshop', login().url(url), '--password-stdin', '--context', 'customer_id'], {
      input: login().password,
    });
    su = await startShim(home.env, ['--connection', 'tcsu']);
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'tcshop']);
  });

  afterAll(async () => {
    await su?.close();
    await scoped?.close();
    await victim?.end();
    rmSync(FILE, { force: true });
  });

  it.each(TYPE_CALL_FORMS)('refuses %s on a read-only superuser connection, and nothing happens', async (sql) => {
    const before = await scans();
    const result = await su.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(REFUSED);
    expect(existsSync(FILE)).toBe(false);
    await victim!.alive();
    expect(await scans()).toBeGreaterThanOrEqual(before);
  });

  it('refuses the conversion through explain_query too', async () => {
    const result = await su.call('explain_query', { sql: 'SELECT dom(1)' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(REFUSED);
    expect(existsSync(FILE)).toBe(false);
  });

  it.each(['SELECT dom(1)', 'SELECT (1).dom', "SELECT _dom('{1}')"])('refuses %s on a connection with context names', async (sql) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(REFUSED);
    await victim!.alive();
  });

  it("still answers built-in conversions by call syntax and a person's type with no code", async () => {
    for (const [sql, rows] of [
      [
        'SELECT int4(1.5) AS a, text(1) AS b, "numeric"(1) AS c, date(\'2020-01-01\')::text AS d',
        [{ a: 2, b: '1', c: '1', d: '2020-01-01' }],
      ],
      ['SELECT plain_d(1) AS p, (2).plain_d AS q', [{ p: 1, q: 2 }]],
    ] as const) {
      const result = await su.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
    await victim!.alive();
    expect(existsSync(FILE)).toBe(false);
  });
});
