/**
 * A person's explicit cast to json, which to_json and its family call for each value of a type
 * made since initdb without the statement naming the cast: through the real shim and daemon, on a
 * read-only connection and on one that separates rows by a context value. The cast function ends
 * another session, or (SECURITY DEFINER) reads every customer's rows; neither runs, wherever the
 * type sits (a column, a view, a domain, a range, an array, a composite), while a person's type
 * with no cast and built-in types still answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { loginDatabase, VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_casts_${process.pid}`;
const AGENT = `${TAG}_agent`;
const VICTIM = `${TAG}_victim`;

/** Ends every session of the victim's application name. */
const TERMINATE = `PERFORM pg_catalog.pg_terminate_backend(a.pid) FROM pg_catalog.pg_stat_activity a WHERE a.application_name OPERATOR(pg_catalog.=) '${VICTIM}';`;

const OBJECTS = [
  'CREATE SCHEMA s',
  "CREATE TYPE s.status AS ENUM ('new', 'paid')",
  `CREATE FUNCTION s.status_json(x s.status) RETURNS json LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN pg_catalog.to_json(x::text || '!'); END $$`,
  'CREATE CAST (s.status AS json) WITH FUNCTION s.status_json(s.status)',
  'CREATE TABLE s.shipments (id int, st s.status)',
  "INSERT INTO s.shipments VALUES (1, 'new'), (2, 'paid')",
  'CREATE VIEW s.shipments_v AS SELECT id, st FROM s.shipments',
  'CREATE DOMAIN s.status_d AS s.status',
  'CREATE TABLE s.dom (id int, d s.status_d)',
  "INSERT INTO s.dom VALUES (1, 'new')",
  'CREATE TYPE s.status_range AS RANGE (subtype = s.status)',
  `CREATE FUNCTION s.range_json(x s.status_range) RETURNS json LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN pg_catalog.to_json(x::text); END $$`,
  'CREATE CAST (s.status_range AS json) WITH FUNCTION s.range_json(s.status_range)',
  'CREATE TABLE s.ranged (id int, r s.status_range)',
  "INSERT INTO s.ranged VALUES (1, '[new,paid]')",
  'CREATE TABLE s.arr (id int, a s.status[])',
  "INSERT INTO s.arr VALUES (1, '{new,paid}')",
  'CREATE TYPE s.pair AS (n int, st s.status)',
  'CREATE TABLE s.comp (id int, p s.pair)',
  "INSERT INTO s.comp VALUES (1, ROW(1, 'new'))",
  // Row security by the context value; the cast function reads every customer's secret with its owner's rights.
  "CREATE TYPE s.tier AS ENUM ('gold', 'silver')",
  'CREATE TABLE s.tiers (customer_id int, t s.tier, secret text)',
  "INSERT INTO s.tiers VALUES (1, 'gold', 'secret-of-1'), (2, 'silver', 'secret-of-2')",
  'ALTER TABLE s.tiers ENABLE ROW LEVEL SECURITY',
  "CREATE POLICY mine ON s.tiers USING (customer_id = pg_catalog.current_setting('mcp.customer_id', true)::int)",
  `CREATE FUNCTION s.tier_json(x s.tier) RETURNS json LANGUAGE sql SECURITY DEFINER
     AS $$ SELECT pg_catalog.to_json((SELECT pg_catalog.string_agg(secret, ',') FROM s.tiers)) $$`,
  'CREATE CAST (s.tier AS json) WITH FUNCTION s.tier_json(s.tier)',
  // Controls: a person's type with no cast, built-in types only.
  "CREATE TYPE s.plain_enum AS ENUM ('x', 'y')",
  'CREATE TABLE s.plain_typed (id int, e s.plain_enum, a s.plain_enum[])',
  "INSERT INTO s.plain_typed VALUES (1, 'x', '{x,y}')",
  'CREATE TABLE s.builtin (id int, v text)',
  "INSERT INTO s.builtin VALUES (1, 'b')",
  `GRANT USAGE ON SCHEMA s TO ${AGENT}`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA s TO ${AGENT}`,
];

describe.skipIf(!available)("a person's cast to json that to_json calls unnamed", { timeout: 300_000 }, () => {
  const { home, login, scratch } = loginDatabase(AGENT, TAG, OBJECTS);
  let readOnly: ShimHandle;
  let scoped: ShimHandle;
  let victim: VictimSession | undefined;

  beforeAll(async () => {
    const url = login().url(scratch().url);
    await home.ok(['add', '--no-test', 'ro', url, '--password-stdin'], { input: login().password });
    await home.ok(['add', '--no-test', 'shop', url, '--password-stdin', '--context', 'customer_id'], { input: login().password });
    readOnly = await startShim(home.env, ['--connection', 'ro']);
    scoped = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    victim = await VictimSession.open(scratch().url, VICTIM);
  });

  afterAll(async () => {
    await victim?.end();
    await readOnly?.close();
    await scoped?.close();
  });

  const alive = async (): Promise<void> => {
    if (!victim) throw new Error('the other session was not opened');
    await victim.alive();
  };

  it.each([
    ['run_query', 'SELECT to_json(st) FROM s.shipments'],
    ['run_query', 'SELECT to_jsonb(st) FROM s.shipments'],
    ['run_query', 'SELECT row_to_json(x) FROM s.shipments x'],
    ['run_query', 'SELECT json_agg(st) FROM s.shipments'],
    ['run_query', 'SELECT jsonb_agg(st) FROM s.shipments'],
    ['run_query', 'SELECT array_to_json(array_agg(st)) FROM s.shipments'],
    ['run_query', "SELECT json_build_object('s', st) FROM s.shipments"],
    ['run_query', 'SELECT json_build_array(v.*) FROM s.shipments v'],
    ['run_query', 'SELECT to_json(st) FROM s.shipments_v'],
    ['run_query', 'SELECT to_json(d) FROM s.dom'],
    ['run_query', 'SELECT to_json(r) FROM s.ranged'],
    ['run_query', 'SELECT to_json(a) FROM s.arr'],
    ['run_query', 'SELECT to_json(p) FROM s.comp'],
    ['explain_query', 'SELECT to_json(st) FROM s.shipments'],
  ])('%s refuses %s, and the other session lives', async (tool, sql) => {
    const result = await readOnly.call(tool, { sql });
    expect(result.isError, textOf(result)).toBe(true);
    // The cast function both reads pg_stat_activity and ends a session: the refusal names the first the walk meets.
    expect(textOf(result)).toMatch(/Refused: .*(calls pg_terminate_backend\(\)|reads pg_stat_activity)/);
    await alive();
  });

  it.each(['shipments', 'comp', 'arr'])('sample_rows refuses s.%s, and the other session lives', async (table) => {
    const result = await readOnly.call('sample_rows', { schema: 's', table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*(calls pg_terminate_backend\(\)|reads pg_catalog\."pg_stat_activity")/);
    await alive();
  });

  it('refuses a function of a person whose body converts its argument to json', async () => {
    await scratch().db.query('CREATE FUNCTION s.label(x s.status) RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.to_json(x)::text $$');
    await scratch().db.query(`GRANT EXECUTE ON FUNCTION s.label(s.status) TO ${AGENT}`);
    const result = await readOnly.call('run_query', { sql: "SELECT s.label('new')" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: label\(\) .*(calls pg_terminate_backend\(\)|reads pg_stat_activity)/);
    await alive();
  });

  it.each(['SELECT to_json(t) FROM s.tiers', 'SELECT to_json(x) FROM s.tiers x', 'SELECT json_agg(t) FROM s.tiers'])(
    "refuses %s on a context connection: no other customer's rows",
    async (sql) => {
      const result = await scoped.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: .*calls tier_json\(\), a SECURITY DEFINER function/);
      expect(textOf(result)).not.toMatch(/secret-of-2/);
    },
  );

  it("still answers a person's type with no cast and built-in types", async () => {
    for (const [shim, sql, rows] of [
      [readOnly, 'SELECT to_json(e)::text AS j, to_json(a)::text AS k FROM s.plain_typed', [{ j: '"x"', k: '["x","y"]' }]],
      [readOnly, 'SELECT row_to_json(b)::text AS j FROM s.builtin b', [{ j: '{"id":1,"v":"b"}' }]],
      [scoped, 'SELECT to_json(e)::text AS j FROM s.plain_typed', [{ j: '"x"' }]],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
    await alive();
  });
});
