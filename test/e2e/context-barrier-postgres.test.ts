/**
 * Views and functions that filter rows by the call's context values, on a connection that
 * separates rows, through the real shim and daemon. PostgreSQL flattens a view that is not
 * `security_barrier` (and inlines a LANGUAGE sql set-returning function) into the statement, and
 * then orders the caller's own conditions and the view's filter by cost: a condition that fails on
 * a value (`note::bool`) runs on the rows the filter would remove, and its error text carries
 * another caller's value. Where rows are separated such a view or function is refused, naming what
 * to change; a `security_barrier` view answers, alone and over a view that filters without one.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { addShopConnections, addSignedConnection, createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';
import { scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_barrier_${process.pid}`;
const AGENT = `${TAG}_agent`;
const SIGNED_SCHEMA = `${TAG}_sig`;
const MINE = "customer_id = current_setting('mcp.customer_id')::int";

const OBJECTS = [
  'CREATE TABLE accounts (id serial PRIMARY KEY, customer_id int, note text)',
  "INSERT INTO accounts (customer_id, note) VALUES (1, 'mine'), (2, 'hidden-note-B'), (2, '12345')",
  `CREATE VIEW my_accounts AS SELECT * FROM accounts WHERE ${MINE}`,
  `CREATE VIEW my_accounts_b WITH (security_barrier) AS SELECT * FROM accounts WHERE ${MINE}`,
  // A barrier over a view that filters without one: the caller's conditions stop at the barrier.
  'CREATE VIEW my_accounts_over WITH (security_barrier = true) AS SELECT * FROM my_accounts',
  // A plain view over one that filters without a barrier: flattened into the statement too.
  'CREATE VIEW my_accounts_outer AS SELECT * FROM my_accounts',
  'CREATE VIEW my_accounts_join AS SELECT a.id, a.note, b.note AS other FROM accounts a JOIN accounts b USING (customer_id) WHERE a.' +
    MINE,
  // The value through a function of the person's: the view still filters by it.
  "CREATE FUNCTION my_customer() RETURNS int LANGUAGE sql STABLE AS $$ SELECT current_setting('mcp.customer_id')::int $$",
  'CREATE VIEW my_accounts_fn AS SELECT * FROM accounts WHERE customer_id = my_customer()',
  'CREATE VIEW my_accounts_fn_b WITH (security_barrier) AS SELECT * FROM accounts WHERE customer_id = my_customer()',
  // An inlinable set-returning SQL function that filters by the value, and ones the server does not inline.
  `CREATE FUNCTION my_rows() RETURNS SETOF accounts LANGUAGE sql STABLE AS $$ SELECT * FROM accounts WHERE ${MINE} $$`,
  `CREATE FUNCTION my_rows_volatile() RETURNS SETOF accounts LANGUAGE sql VOLATILE AS $$ SELECT * FROM accounts WHERE ${MINE} $$`,
  `CREATE FUNCTION my_rows_plpgsql() RETURNS SETOF accounts LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY SELECT * FROM accounts WHERE ${MINE}; END $$`,
  // A view that reads a setting and removes no rows hides nothing; one that filters by any setting hides rows.
  "CREATE VIEW with_zone AS SELECT id, current_setting('TimeZone') AS zone FROM accounts",
  "CREATE VIEW by_app_name AS SELECT * FROM accounts WHERE note <> current_setting('application_name')",
];

describe.skipIf(!available)('views and functions that filter by context values on PostgreSQL', () => {
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  const { scoped, plain, signed } = scopedAndPlainShims({
    async setUp(home) {
      login = await createPgLogin(AGENT);
      scratch = await scratchPgDatabase(TAG, [
        ...OBJECTS,
        `GRANT SELECT ON my_accounts, my_accounts_b, my_accounts_over, my_accounts_outer, my_accounts_join, my_accounts_fn, my_accounts_fn_b, with_zone, by_app_name TO ${AGENT}`,
        // The table itself only through the functions (they run as the caller).
        `GRANT SELECT ON accounts TO ${AGENT}`,
      ]);
      const url = login.url(scratch.url);
      await addShopConnections(home, url, login.password);
      // Signed values: the verifying function, and views keyed on it with and without the barrier.
      await scratch.db.query(await addSignedConnection(home, url, login.password, SIGNED_SCHEMA));
      const keyed = `customer_id = (SELECT ${SIGNED_SCHEMA}.context('customer_id'))::int`;
      await scratch.db.query(`CREATE VIEW signed_accounts AS SELECT * FROM accounts WHERE ${keyed}`);
      await scratch.db.query(`CREATE VIEW signed_accounts_b WITH (security_barrier) AS SELECT * FROM accounts WHERE ${keyed}`);
      await scratch.db.query(`GRANT SELECT ON signed_accounts, signed_accounts_b TO ${AGENT}`);
    },
    async dispose() {
      await scratch?.drop();
      await login?.drop();
    },
    more: { signed: { connection: 'signed', customer: '1' } },
  });

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { note: string }[] }).rows;
  };

  it.each([
    ["SELECT * FROM my_accounts WHERE note <> 'mine' AND note::bool", 'my_accounts'],
    ['SELECT * FROM my_accounts WHERE customer_id::text::bool', 'my_accounts'],
    ["SELECT * FROM my_accounts_outer WHERE note <> 'mine' AND note::bool", 'my_accounts'],
    ["SELECT * FROM my_accounts_join WHERE other <> 'mine' AND other::bool", 'my_accounts_join'],
    ["SELECT * FROM my_accounts_fn WHERE note <> 'mine' AND note::bool", 'my_accounts_fn'],
    ['SELECT * FROM my_accounts', 'my_accounts'],
    ["SELECT * FROM by_app_name WHERE note <> 'mine' AND note::bool", 'by_app_name'],
  ])('refuses %s where rows are separated, naming %s and the remedy', async (sql, view) => {
    const result = await scoped.call('run_query', { sql });
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: context-barrier)');
    expect(text).toContain(`ALTER VIEW ${view} SET (security_barrier = true)`);
    expect(text).not.toMatch(/hidden-note-B|12345/);
  });

  it('refuses an inlinable SQL function that filters by the value, saying what to change', async () => {
    const result = await scoped.call('run_query', { sql: "SELECT * FROM my_rows() WHERE note <> 'mine' AND note::bool" });
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: context-barrier)');
    expect(text).toMatch(/my_rows\(\)/);
    expect(text).toMatch(/security_barrier/);
    expect(text).not.toMatch(/hidden-note-B|12345/);
  });

  it('refuses a view keyed on the signed value without the barrier, and answers the one with it', async () => {
    const result = await signed.call('run_query', { sql: "SELECT * FROM signed_accounts WHERE note <> 'mine' AND note::bool" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('ALTER VIEW signed_accounts SET (security_barrier = true)');
    expect(textOf(result)).not.toMatch(/hidden-note-B|12345/);
    expect(rowsOf(await signed.call('run_query', { sql: 'SELECT * FROM signed_accounts_b' })).map((r) => r.note)).toEqual(['mine']);
  });

  it('sample_rows refuses such a view too', async () => {
    const result = await scoped.call('sample_rows', { schema: 'public', table: 'my_accounts' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: context-barrier)');
  });

  it('answers security_barrier views (alone, over a view without one, over a function), and functions the server does not inline', async () => {
    for (const view of ['my_accounts_b', 'my_accounts_over', 'my_accounts_fn_b']) {
      expect(rowsOf(await scoped.call('run_query', { sql: `SELECT * FROM ${view}` })).map((r) => r.note)).toEqual(['mine']);
      expect(rowsOf(await scoped.call('run_query', { sql: `SELECT * FROM ${view} WHERE note <> 'mine' AND note::bool` }))).toEqual([]);
    }
    expect(rowsOf(await scoped.call('sample_rows', { schema: 'public', table: 'my_accounts_b' })).map((r) => r.note)).toEqual(['mine']);
    for (const fn of ['my_rows_volatile', 'my_rows_plpgsql']) {
      expect(rowsOf(await scoped.call('run_query', { sql: `SELECT * FROM ${fn}() WHERE note <> 'mine' AND note::bool` }))).toEqual([]);
    }
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM with_zone' }))).toHaveLength(3);
  });

  it('keeps them where no context names are declared', async () => {
    expect(rowsOf(await plain.call('run_query', { sql: 'SELECT * FROM accounts' }))).toHaveLength(3);
    const result = await plain.call('run_query', { sql: "SELECT * FROM my_accounts WHERE note <> 'mine'" });
    expect(textOf(result)).not.toContain('context-barrier');
  });
});
