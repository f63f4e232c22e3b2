/**
 * Built-in input functions that take a type's OID and run that type's own code (array_in,
 * record_in, domain_in, ...): through the real shim and daemon on a read-only connection, a
 * person's domain whose CHECK ends another session never runs, whether the statement hands the
 * OID over at run time, as a regtype constant or as a number, directly or through a person's view
 * or function; built-in types given as constants still answer.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { loginDatabase, VictimSession } from '../helpers/pg-sessions.js';
import { GUARDED_READERS, RUNTIME_OID } from '../helpers/type-dispatch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_fix_dispatch_${process.pid}`;
const AGENT = `${TAG}_agent`;
const VICTIM = `${TAG}_victim`;

const OBJECTS = [
  'CREATE SCHEMA s',
  // The domain's CHECK ends the victim's session (the agent's own role, so it may).
  `CREATE FUNCTION s.stop_victim(v int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN
     PERFORM pg_catalog.pg_terminate_backend(a.pid) FROM pg_catalog.pg_stat_activity a WHERE a.application_name OPERATOR(pg_catalog.=) '${VICTIM}';
     RETURN true; END $$`,
  'CREATE DOMAIN s.guarded AS int CHECK (s.stop_victim(VALUE))',
  'CREATE TYPE s.pair AS (n s.guarded)',
  ...GUARDED_READERS,
  "CREATE VIEW s.regtype_v AS SELECT pg_catalog.array_in('{1}', 's.guarded'::pg_catalog.regtype, -1)::text AS a",
  `CREATE FUNCTION s.parse_plpgsql(x text) RETURNS text LANGUAGE plpgsql AS $$ DECLARE t oid; BEGIN
     SELECT y.oid INTO t FROM pg_catalog.pg_type y WHERE y.typname OPERATOR(pg_catalog.=) ('guar' || 'ded');
     RETURN pg_catalog.array_in(x::cstring, t, -1)::text; END $$`,
  // Controls: built-in types only.
  "CREATE VIEW s.builtin_v AS SELECT pg_catalog.array_in('{1,2}', 23, -1)::text AS a",
  `GRANT USAGE ON SCHEMA s TO ${AGENT}`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA s TO ${AGENT}`,
];

describe.skipIf(!available)("type-dispatching input functions run a person's type code", { timeout: 300_000 }, () => {
  const { home, login, scratch } = loginDatabase(AGENT, TAG, OBJECTS);
  let readOnly: ShimHandle;
  let victim: VictimSession | undefined;

  beforeAll(async () => {
    await home.ok(['add', '--no-test', 'ro', login().url(scratch().url), '--password-stdin'], { input: login().password });
    readOnly = await startShim(home.env, ['--connection', 'ro']);
  });

  // A session of the agent's own role (which it may end), fresh for each test.
  beforeEach(async () => {
    victim = await VictimSession.open(login().urlWithPassword(scratch().url), VICTIM);
  });

  afterEach(async () => {
    await victim?.end();
  });

  afterAll(async () => {
    await readOnly?.close();
  });

  const alive = async (): Promise<void> => {
    if (!victim) throw new Error('the other session was not opened');
    await victim.alive();
  };

  it.each([
    `SELECT pg_catalog.array_in('{1}', ${RUNTIME_OID}, -1)::text AS a`,
    `SELECT pg_catalog.record_in('(1)', (SELECT t.oid FROM pg_catalog.pg_type t WHERE t.typname OPERATOR(pg_catalog.=) ('pa' || 'ir')), -1)::text AS a`,
    `SELECT pg_catalog.domain_in('1', ${RUNTIME_OID}, -1)::text AS a`,
    `SELECT pg_catalog.array_in('{1}', t.oid, -1)::text AS a FROM pg_catalog.pg_type t WHERE t.typname OPERATOR(pg_catalog.=) 'guarded'`,
  ])('refuses a type OID chosen when it runs: %s, and the other session lives', async (sql) => {
    const result = await readOnly.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: \w+\(\) runs the own code of the type .*chosen only when the statement runs/);
    await alive();
  });

  it.each([
    "SELECT pg_catalog.array_in('{1}', 's.guarded'::pg_catalog.regtype, -1)::text AS a",
    "SELECT pg_catalog.record_in('(1)', 's.pair'::regtype::oid, -1)::text AS a",
    "SELECT pg_catalog.domain_in('1', 's.guarded'::regtype, -1)::text AS a",
  ])("refuses a person's type given as a constant: %s, and the other session lives", async (sql) => {
    const result = await readOnly.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: \w+\(\) runs the own code of the type .*not one PostgreSQL itself made/);
    await alive();
  });

  it.each([
    ['s.runtime_v', 'SELECT a FROM s.runtime_v', /hands array_in\(\) a type chosen only when it runs/],
    ['s.parse_sql', "SELECT s.parse_sql('{1}')", /hands array_in\(\) a type chosen only when it runs/],
    ['s.parse_plpgsql', "SELECT s.parse_plpgsql('{1}')", /hands array_in\(\) a type chosen only when it runs/],
    ['s.parse_atomic', "SELECT s.parse_atomic('{1}')", /hands array_in\(\) a type chosen only when it runs/],
    ['s.const_v', 'SELECT a FROM s.const_v', /a type created since installation given by its number/],
    ['s.regtype_v', 'SELECT a FROM s.regtype_v', /calls pg_terminate_backend\(\)|reads pg_stat_activity/],
    ['s.parse_const', "SELECT s.parse_const('{1}')", /calls pg_terminate_backend\(\)|reads pg_stat_activity/],
    ['s.parse_const_atomic', "SELECT s.parse_const_atomic('{1}')", /a type created since installation given by its number/],
  ])("refuses %s, a person's object handing a dispatcher the domain, and the other session lives", async (_name, sql, why) => {
    const result = await readOnly.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: /);
    expect(textOf(result)).toMatch(why);
    await alive();
  });

  // The populate functions take the type from their first argument's, which the statement names.
  it.each([
    `SELECT (pg_catalog.json_populate_record(NULL::s.pair, '{"n": 1}')).n AS n`,
    `SELECT (pg_catalog.jsonb_populate_record(NULL::s.pair, '{"n": 1}')).n AS n`,
    `SELECT x.n FROM pg_catalog.json_populate_recordset(NULL::s.pair, '[{"n": 1}]') AS x`,
    `SELECT x.n FROM pg_catalog.json_to_record('{"n": 1}') AS x(n s.guarded)`,
  ])('refuses %s, which names the type, and the other session lives', async (sql) => {
    const result = await readOnly.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: .*(calls pg_terminate_backend\(\)|reads pg_stat_activity)/);
    await alive();
  });

  it('still answers built-in types given as constants, directly and through a view or a function', async () => {
    for (const [sql, rows] of [
      ["SELECT pg_catalog.array_in('{1,2}', 23, -1)::text AS a", [{ a: '{1,2}' }]],
      ["SELECT array_in('{1,2}', 'int4'::regtype, -1)::text AS a", [{ a: '{1,2}' }]],
      ['SELECT a FROM s.builtin_v', [{ a: '{1,2}' }]],
      ["SELECT s.parse_int('{3}') AS a", [{ a: '{3}' }]],
    ] as const) {
      const result = await readOnly.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
    await alive();
  });
});
