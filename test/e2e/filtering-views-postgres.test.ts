/**
 * Views and inlinable SQL functions that remove rows, however they filter, on a connection that
 * separates rows, through the real shim and daemon. PostgreSQL merges a view that is not
 * `security_barrier` into the statement (and inlines a LANGUAGE sql set-returning function), then
 * orders the caller's own conditions and the view's filter by cost, so a condition that fails on a
 * value runs on the rows the filter removes and its error text carries them. That holds whatever
 * the filter reads: a context value, a join to a table under row security, a sublink, a function,
 * HAVING, a set operation, LIMIT. Here the ledger has no row security and no grant to the caller;
 * only the views over it, which keep the accounts of the caller's customer, are granted. A view
 * that only projects columns of one relation removes no rows and answers; so do the
 * `security_barrier` versions.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

const HIDDEN = /led-hidden-B|888|n-hidden-B/;

/** Views over the ledger that keep the caller's accounts, each by another kind of filter, none security_barrier. */
const FILTERING: Record<string, string> = {
  v_ledger: 'SELECT l.* FROM app.ledger l WHERE l.account_id IN (SELECT account_id FROM app.acl)',
  v_ledger_join: 'SELECT l.* FROM app.ledger l JOIN app.acl a USING (account_id)',
  v_ledger_comma: 'SELECT l.* FROM app.ledger l, app.acl a WHERE a.account_id = l.account_id',
  v_ledger_exists: 'SELECT l.* FROM app.ledger l WHERE EXISTS (SELECT FROM app.acl a WHERE a.account_id = l.account_id)',
  v_ledger_via_b: 'SELECT l.* FROM app.ledger l WHERE l.account_id IN (SELECT account_id FROM app.my_acl_b)',
  v_ledger_fn: 'SELECT l.* FROM app.ledger l WHERE app.allowed(l.account_id)',
  v_ledger_from_sub: 'SELECT s.* FROM (SELECT * FROM app.ledger WHERE account_id = 100) s',
  v_ledger_cte: 'WITH k AS (SELECT * FROM app.ledger WHERE account_id = 100) SELECT * FROM k',
  v_ledger_union: 'SELECT * FROM app.ledger WHERE account_id = 100 UNION ALL SELECT * FROM app.ledger WHERE false',
  v_ledger_except: 'SELECT * FROM app.ledger EXCEPT SELECT * FROM app.ledger WHERE account_id = 200',
  v_ledger_having: 'SELECT account_id, max(note) AS note FROM app.ledger GROUP BY account_id HAVING account_id = 100',
  v_ledger_limit: 'SELECT * FROM app.ledger ORDER BY id LIMIT 1',
  v_ledger_distinct_on: 'SELECT DISTINCT ON (account_id) * FROM app.ledger ORDER BY account_id, id',
  // Through a function of a person's that reads the value in spellings a pattern over its text misses.
  v_notes_plpgsql: 'SELECT * FROM app.notes WHERE customer_id = app.cust_plpgsql()',
  v_notes_comment: 'SELECT * FROM app.notes WHERE customer_id = app.cust_comment()',
};

const OWNED = (owner: string, agent: string): string[] => [
  'RESET ROLE',
  `CREATE SCHEMA app AUTHORIZATION ${owner}`,
  `SET ROLE ${owner}`,
  `GRANT USAGE ON SCHEMA app TO ${agent}`,
  'CREATE TABLE app.acl (account_id int PRIMARY KEY, customer_id int NOT NULL)',
  'INSERT INTO app.acl VALUES (100, 1), (200, 2)',
  'ALTER TABLE app.acl ENABLE ROW LEVEL SECURITY',
  'ALTER TABLE app.acl FORCE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON app.acl USING (${RLS_POLICY})`,
  'CREATE TABLE app.ledger (id serial PRIMARY KEY, account_id int NOT NULL, note text NOT NULL)',
  "INSERT INTO app.ledger (account_id, note) VALUES (100, 'led-mine'), (200, 'led-hidden-B'), (200, '888')",
  'CREATE TABLE app.notes (customer_id int NOT NULL, note text NOT NULL)',
  "INSERT INTO app.notes VALUES (1, 'n-mine'), (2, 'n-hidden-B'), (2, '888')",
  `CREATE VIEW app.my_acl_b WITH (security_barrier) AS SELECT * FROM app.acl WHERE ${RLS_POLICY}`,
  'CREATE FUNCTION app.allowed(a int) RETURNS boolean LANGUAGE sql STABLE AS $$ SELECT EXISTS (SELECT FROM app.acl WHERE account_id = a) $$',
  `CREATE FUNCTION app.cust_plpgsql() RETURNS int LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN nullif(pg_catalog."current_setting"('mcp.customer_id',true),'')::int; END $$`,
  "CREATE FUNCTION app.cust_comment() RETURNS int LANGUAGE sql STABLE AS $$ SELECT nullif(current_setting /* ctx */ ('mcp.customer_id',true),'')::int $$",
  ...Object.entries(FILTERING).map(([name, sql]) => `CREATE VIEW app.${name} AS ${sql}`),
  'CREATE VIEW app.v_ledger_sample AS SELECT * FROM app.ledger TABLESAMPLE SYSTEM (50)',
  `CREATE VIEW app.v_ledger_b WITH (security_barrier) AS ${FILTERING.v_ledger}`,
  // Projections: a renaming view over one relation, and a plain view over the barrier view.
  'CREATE VIEW app.v_ledger_cols AS SELECT id, note AS memo FROM app.ledger',
  'CREATE VIEW app.v_ledger_b_cols AS SELECT id, note FROM app.v_ledger_b',
  // A projection over a view that filters: merged into the statement with it.
  'CREATE VIEW app.v_ledger_outer AS SELECT id, note FROM app.v_ledger',
  // A barrier over a view that filters without one: the caller's conditions stop at the barrier.
  'CREATE VIEW app.v_ledger_over WITH (security_barrier) AS SELECT * FROM app.v_ledger',
  // A policy that reads a view that filters: the policy is a barrier, and the caller's conditions stay outside it.
  'CREATE VIEW app.v_acl_open AS SELECT account_id FROM app.acl WHERE customer_id > 0',
  'CREATE TABLE app.ledger_rls (id int, account_id int NOT NULL, note text NOT NULL)',
  "INSERT INTO app.ledger_rls VALUES (1, 100, 'led-mine'), (2, 200, 'led-hidden-B'), (3, 200, '888')",
  'ALTER TABLE app.ledger_rls ENABLE ROW LEVEL SECURITY',
  'CREATE POLICY by_acl ON app.ledger_rls USING (account_id IN (SELECT account_id FROM app.v_acl_open))',
  // Views that read as their caller: what they remove the caller may select itself, unless they read a view that filters.
  "CREATE VIEW app.v_ledger_rls_inv WITH (security_invoker) AS SELECT l.note FROM app.ledger_rls l JOIN app.acl a USING (account_id) WHERE l.note <> 'x'",
  'CREATE VIEW app.v_ledger_inv_over WITH (security_invoker) AS SELECT id, note FROM app.v_ledger WHERE id > 0',
  // Inlinable set-returning SQL functions (run with the caller's rights) that filter, in a text body and a BEGIN ATOMIC body; one that only projects.
  'CREATE FUNCTION app.my_ledger() RETURNS TABLE (id int, note text) LANGUAGE sql STABLE AS $$ SELECT c.id, c.memo FROM app.v_ledger_cols c WHERE c.id IN (SELECT b.id FROM app.v_ledger_b b) $$',
  'CREATE FUNCTION app.my_ledger_atomic() RETURNS TABLE (id int, note text) LANGUAGE sql STABLE BEGIN ATOMIC SELECT c.id, c.memo FROM app.v_ledger_cols c WHERE c.id IN (SELECT b.id FROM app.v_ledger_b b); END',
  'CREATE FUNCTION app.all_ledger() RETURNS TABLE (id int, note text) LANGUAGE sql STABLE BEGIN ATOMIC SELECT c.id, c.memo FROM app.v_ledger_cols c; END',
  `GRANT SELECT ON ALL TABLES IN SCHEMA app TO ${agent}`,
  `REVOKE SELECT ON app.ledger, app.acl, app.notes FROM ${agent}`,
  // The security_invoker view reads acl as the caller, whom its policy binds.
  `GRANT SELECT ON app.acl TO ${agent}`,
];

describe.skipIf(!available)('views and functions that remove rows without a barrier on PostgreSQL', () => {
  const db = new RlsOwnerDatabase('hanactl_filter');
  const { scoped, signed, plain } = scopedAndPlainShims({
    async setUp(home) {
      const schema = `${db.name}_sig`;
      await db.setUp(OWNED(db.owner, db.agent));
      await db.addScopedAndPlain(home);
      await db.addConnection(home, 'signed', ['--context', 'customer_id']);
      await home.ok(['set', 'signed', '--signed-context']);
      // The verifying function is the superuser's; the signed policy and view are the owner's.
      await db.asSuperuser([
        (await home.ok(['context-sql', 'signed', '--schema', schema])).stdout,
        `GRANT USAGE ON SCHEMA ${schema} TO ${db.owner}`,
        `SET ROLE ${db.owner}`,
        'CREATE TABLE app.acl_signed (account_id int PRIMARY KEY, customer_id int NOT NULL)',
        'INSERT INTO app.acl_signed VALUES (100, 1), (200, 2)',
        'ALTER TABLE app.acl_signed ENABLE ROW LEVEL SECURITY',
        'ALTER TABLE app.acl_signed FORCE ROW LEVEL SECURITY',
        `CREATE POLICY by_signed ON app.acl_signed USING (customer_id = (SELECT ${schema}.context('customer_id'))::int)`,
        'CREATE VIEW app.v_ledger_signed AS SELECT l.* FROM app.ledger l WHERE l.account_id IN (SELECT account_id FROM app.acl_signed)',
        `GRANT SELECT ON app.v_ledger_signed TO ${db.agent}`,
        'RESET ROLE',
      ]);
    },
    dispose: () => db.dispose(),
    more: { signed: { connection: 'signed', customer: '1' } },
  });

  const notesOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { note?: string; memo?: string }[] }).rows.map((r) => r.note ?? r.memo);
  };

  const refused = (result: CallToolResult, view: string) => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: context-barrier)');
    expect(text).toContain(`ALTER VIEW ${view} SET (security_barrier = true)`);
    expect(text).not.toMatch(HIDDEN);
  };

  it.each([
    ["SELECT * FROM app.v_ledger WHERE note <> 'led-mine' AND note::int > 0"],
    ["SELECT * FROM app.v_ledger WHERE CASE WHEN note = '888' THEN 1 / (length(note) - 3) ELSE 0 END = 1"],
    ['SELECT count(*) FROM app.v_ledger'],
  ])('refuses %s, naming the view and the remedy', async (sql) => {
    refused(await scoped.call('run_query', { sql }), 'app.v_ledger');
  });

  it.each(Object.keys(FILTERING))('refuses the view %s, whatever it filters by', async (view) => {
    const leaky = view.startsWith('v_notes') ? "note <> 'n-mine' AND note::int > 0" : "note <> 'led-mine' AND note::int > 0";
    refused(await scoped.call('run_query', { sql: `SELECT * FROM app.${view} WHERE ${leaky}` }), `app.${view}`);
    refused(await scoped.call('run_query', { sql: `SELECT * FROM app.${view}` }), `app.${view}`);
  });

  it('refuses a view that samples its rows, for the pages the sample reads (rule system-column)', async () => {
    for (const sql of [
      "SELECT * FROM app.v_ledger_sample WHERE note <> 'led-mine' AND note::int > 0",
      'SELECT * FROM app.v_ledger_sample',
    ]) {
      const result = await scoped.call('run_query', { sql });
      const text = textOf(result);
      expect(result.isError, text).toBe(true);
      expect(text).toContain('(rule: system-column)');
      expect(text).toContain('app.v_ledger_sample');
      expect(text).not.toMatch(HIDDEN);
    }
  });

  it('refuses a projection over a view that filters, naming the inner one', async () => {
    const result = await scoped.call('run_query', { sql: "SELECT * FROM app.v_ledger_outer WHERE note <> 'led-mine' AND note::int > 0" });
    refused(result, 'app.v_ledger');
    expect(textOf(result)).toContain('app.v_ledger_outer reads app.v_ledger');
  });

  it('refuses a security_invoker view over a view that filters, naming the inner one', async () => {
    const result = await scoped.call('run_query', {
      sql: "SELECT * FROM app.v_ledger_inv_over WHERE note <> 'led-mine' AND note::int > 0",
    });
    refused(result, 'app.v_ledger');
  });

  it('refuses such a view where values are signed', async () => {
    refused(
      await signed.call('run_query', { sql: "SELECT * FROM app.v_ledger_signed WHERE note <> 'led-mine' AND note::int > 0" }),
      'app.v_ledger_signed',
    );
  });

  it('refuses inlinable SQL functions that filter, in a text body and a BEGIN ATOMIC one', async () => {
    for (const fn of ['my_ledger', 'my_ledger_atomic']) {
      const result = await scoped.call('run_query', { sql: `SELECT * FROM app.${fn}() WHERE note <> 'led-mine' AND note::int > 0` });
      const text = textOf(result);
      expect(result.isError, text).toBe(true);
      expect(text).toContain('(rule: context-barrier)');
      expect(text).toContain(`${fn}()`);
      expect(text).not.toMatch(HIDDEN);
    }
  });

  it('refuses the view a policy reads where the statement names it', async () => {
    const result = await scoped.call('run_query', { sql: 'SELECT * FROM app.v_acl_open WHERE account_id::text::bool' });
    refused(result, 'app.v_acl_open');
  });

  it('sample_rows refuses such a view too', async () => {
    const result = await scoped.call('sample_rows', { schema: 'app', table: 'v_ledger_join' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: context-barrier)');
  });

  it('answers the security_barrier versions, projections, and a barrier over a view that filters', async () => {
    for (const view of ['v_ledger_b', 'v_ledger_b_cols', 'v_ledger_over']) {
      expect(notesOf(await scoped.call('run_query', { sql: `SELECT * FROM app.${view}` }))).toEqual(['led-mine']);
      const leaky = await scoped.call('run_query', {
        sql: `SELECT * FROM app.${view} WHERE CASE WHEN note = '888' THEN 1 / (length(note) - 3) ELSE 0 END = 1`,
      });
      expect(notesOf(leaky)).toEqual([]);
    }
    expect(notesOf(await scoped.call('run_query', { sql: 'SELECT * FROM app.v_ledger_cols ORDER BY id' }))).toEqual([
      'led-mine',
      'led-hidden-B',
      '888',
    ]);
    expect(notesOf(await scoped.call('run_query', { sql: 'SELECT * FROM app.all_ledger() ORDER BY id' }))).toHaveLength(3);
    expect(notesOf(await scoped.call('run_query', { sql: 'SELECT note FROM app.ledger_rls' }))).toEqual(['led-mine']);
    expect(notesOf(await scoped.call('run_query', { sql: 'SELECT note FROM app.v_ledger_rls_inv' }))).toEqual(['led-mine']);
    const leaky = "SELECT note FROM app.ledger_rls WHERE CASE WHEN note = '888' THEN 1 / (length(note) - 3) ELSE 0 END = 1";
    expect(notesOf(await scoped.call('run_query', { sql: leaky }))).toEqual([]);
  });

  it('keeps every view where no context names are declared', async () => {
    expect(notesOf(await plain.call('run_query', { sql: 'SELECT * FROM app.v_ledger_join ORDER BY id' }))).toEqual([]);
    expect(textOf(await plain.call('run_query', { sql: 'SELECT * FROM app.v_ledger_limit' }))).not.toContain('context-barrier');
  });
});
