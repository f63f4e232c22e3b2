/**
 * Where rows are separated, every caller of a connection is the same login and shares its schema.
 * Through the real shim and daemon, on writable connections with context names (values signed and
 * not): a caller may not create objects other callers would meet — a function whose SET clause
 * gives back the server's costs, so that its own condition runs before the policy and fails on a
 * hidden row (the outside review's F1), or a table in the login's own schema ahead of the
 * person's on the search path (F2) — and rows are still read and written.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** F1: a condition that fails on a hidden row whose note starts with `v`, run with the server's costs. */
const F1 = `CREATE FUNCTION f(v text) RETURNS bigint LANGUAGE plpgsql SET cpu_operator_cost = 0.0025 AS $$
  DECLARE n bigint;
  BEGIN
    SELECT count(*) INTO n FROM sorders WHERE CASE WHEN note ^@ v THEN (SELECT true LIMIT -1) ELSE true END;
    RETURN n;
  END $$`;

/** Bodies that set cpu_operator_cost for the query after them, each as a statement of its own. */
const PERSON_BODIES: readonly (readonly [string, string])[] = [
  ['person_set', 'SET LOCAL cpu_operator_cost = 0.0025;'],
  ['person_reset', 'RESET "CPU_OPERATOR_COST";'],
  ['person_reset_all', 'RESET /* every setting */ ALL;'],
  ['person_config', "PERFORM set_config('cpu_operator_cost', '0.0025', true);"],
  ['person_settings', "UPDATE pg_settings SET setting = '0.0025' WHERE name = 'cpu_' || 'operator_cost';"],
];

/** A PL/pgSQL function `name(v text)` that runs `first`, then F1's condition. */
const personFunction = (name: string, first: string): string => `CREATE FUNCTION ${name}(v text) RETURNS bigint LANGUAGE plpgsql AS $$
  DECLARE n bigint;
  BEGIN
    ${first}
    SELECT count(*) INTO n FROM sorders WHERE CASE WHEN note ^@ v THEN (SELECT true LIMIT -1) ELSE true END;
    RETURN n;
  END $$`;

describe.skipIf(!available)("a login's schema, shared by every caller where rows are separated, on PostgreSQL", () => {
  const db = new RlsOwnerDatabase('fix_shared');
  const callers = scopedAndPlainShims({
    async setUp(home) {
      await db.setUp(
        [
          'CREATE TABLE sorders (customer_id int NOT NULL, note text NOT NULL)',
          "INSERT INTO sorders VALUES (1, 'mine-a'), (2, 'secret-b')",
          'ALTER TABLE sorders ENABLE ROW LEVEL SECURITY',
          `CREATE POLICY by_customer ON sorders USING (${RLS_POLICY})`,
          // A person's functions that give back the server's costs for what they run.
          F1.replace('FUNCTION f(', 'FUNCTION person_f('),
          ...PERSON_BODIES.map(([name, body]) => personFunction(name, body)),
          "CREATE FUNCTION person_fine() RETURNS bigint LANGUAGE sql AS $$ SELECT count(*) FROM sorders WHERE note <> 'cpu_operator' $$",
        ],
        [
          `GRANT SELECT, INSERT ON sorders TO ${db.agent}`,
          // The default search path's "$user": a schema of the login's own, ahead of public.
          `CREATE SCHEMA ${db.agent} AUTHORIZATION ${db.agent}`,
        ],
      );
      await db.addScopedAndPlain(home);
      await db.addConnection(home, 'shopw', ['--allow-write', '--context', 'customer_id']);
      await db.addConnection(home, 'signedw', ['--allow-write', '--context', 'customer_id']);
      await home.ok(['set', 'signedw', '--signed-context']);
    },
    dispose: () => db.dispose(),
    more: {
      a: { connection: 'shopw', customer: '1' },
      b: { connection: 'shopw', customer: '2' },
      signedA: { connection: 'signedw', customer: '1' },
      signedB: { connection: 'signedw', customer: '2' },
    },
  });
  const { scoped, plain, a, b, signedA, signedB } = callers;

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: Record<string, unknown>[] }).rows;
  };
  const refused = (result: CallToolResult, rule?: string) => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toMatch(/^STATEMENT_REFUSED/);
    if (rule) expect(text).toContain(`(rule: ${rule})`);
    expect(text).not.toMatch(/secret-b/);
    return text;
  };
  /** Whether `condition` holds in the database, asked as the superuser. */
  const holds = async (condition: string): Promise<boolean> => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      return (await admin.query(`SELECT (${condition}) AS v`)).rows[0].v === true;
    } finally {
      await admin.end();
    }
  };

  it("refuses F1's function on both writable connections, and it never exists", async () => {
    // Unsigned values: the function is code the checks cannot read (context-code) before anything else.
    refused(await a.call('run_query', { sql: F1 }), 'context-code');
    const text = refused(await signedA.call('run_query', { sql: F1 }), 'shared-schema');
    expect(text).toMatch(/every caller of this connection's login shares its schema/);
    expect(await holds("EXISTS (SELECT FROM pg_proc WHERE proname = 'f')")).toBe(false);
    expect(textOf(await signedA.call('run_query', { sql: "SELECT f('secret-b')" }))).toMatch(/function f\(unknown\) does not exist/);
  });

  it("refuses F2's table in the login's own schema, plain and signed, so the person's table still answers", async () => {
    for (const caller of [a, signedA]) {
      refused(await caller.call('run_query', { sql: `CREATE TABLE ${db.agent}.sorders (customer_id int, note text)` }), 'shared-schema');
      refused(await caller.call('run_query', { sql: 'CREATE TABLE sorders (customer_id int, note text)' }), 'shared-schema');
      refused(await caller.call('run_query', { sql: `SELECT * INTO ${db.agent}.sorders FROM public.sorders` }), 'shared-schema');
      refused(
        await caller.call('run_query', { sql: `CREATE VIEW ${db.agent}.sorders AS SELECT 1 AS customer_id, 'planted' AS note` }),
        'shared-schema',
      );
    }
    refused(
      await signedA.call('run_query', {
        sql: `DO $$ BEGIN EXECUTE 'CREATE TABLE ${db.agent}.sorders (customer_id int, note text)'; END $$`,
      }),
      'shared-schema',
    );
    expect(await holds(`to_regclass('${db.agent}.sorders') IS NOT NULL`)).toBe(false);
    // B reads the person's table: its own row, nothing a caller planted.
    expect(rowsOf(await b.call('run_query', { sql: 'SELECT note FROM sorders' }))).toEqual([{ note: 'secret-b' }]);
  });

  it("refuses a person's function that sets cpu_operator_cost, by its SET clause or in its body, on every separated connection", async () => {
    for (const caller of [scoped, a, signedA]) {
      for (const name of ['person_f', ...PERSON_BODIES.map(([n]) => n)]) {
        // The same refusal whether or not a hidden row starts so: the walk refuses before anything runs.
        const hit = refused(await caller.call('run_query', { sql: `SELECT ${name}('secret-b') AS n` }));
        const miss = refused(await caller.call('run_query', { sql: `SELECT ${name}('nothing-starts-so') AS n` }));
        expect(miss).toBe(hit);
        expect(hit).toMatch(new RegExp(`${name}\\(\\)`));
        expect(hit).toMatch(name === 'person_config' ? /set_config\(\)/ : /cpu_operator_cost/);
      }
      expect(textOf(await caller.call('run_query', { sql: "SELECT person_f('secret-b') AS n" }))).toMatch(
        /sets cpu_operator_cost .*row-security policy/s,
      );
      expect(rowsOf(await caller.call('run_query', { sql: 'SELECT person_fine() AS n' }))).toHaveLength(1);
    }
    // Without context names the function runs as its author meant.
    expect(rowsOf(await plain.call('run_query', { sql: "SELECT person_set('nothing') AS n" }))).toHaveLength(1);
  });

  it('warns on add and test that the login may create objects in a schema on its search path', async () => {
    const warning = new RegExp(`may create objects in ${db.agent} .*on its search path.*shadow`, 's');
    expect((await callers.home.ok(['test', 'shopw'])).stderr).toMatch(warning);
    expect((await db.addConnection(callers.home, 'shop2', ['--context', 'customer_id'], { test: true })).stderr).toMatch(warning);
    // Without context names no caller's rows are separated from another's.
    expect((await callers.home.ok(['test', 'plain'])).stderr).not.toMatch(/may create objects/);
  });

  it('still reads and writes rows, each caller its own', async () => {
    expect(rowsOf(await a.call('run_query', { sql: "INSERT INTO sorders VALUES (1, 'new-a') RETURNING note" }))).toEqual([
      { note: 'new-a' },
    ]);
    expect(rowsOf(await signedB.call('run_query', { sql: "INSERT INTO sorders VALUES (2, 'new-b') RETURNING customer_id" }))).toEqual([
      { customer_id: 2 },
    ]);
    expect(rowsOf(await signedA.call('run_query', { sql: 'SELECT note FROM sorders ORDER BY note' }))).toEqual([
      { note: 'mine-a' },
      { note: 'new-a' },
    ]);
  });
});
