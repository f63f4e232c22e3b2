/**
 * A caller's condition that calls, on no column of the row, a function that can fail, write or
 * wait (has_table_privilege('nope', ...), current_setting('nope'), regclass input, nextval):
 * PostgreSQL counts such a condition as leakproof (contain_leaked_vars) and runs it before the
 * row-security policy or a security_barrier view's filter, so `CASE WHEN note = '<guess>' THEN
 * <fails> ELSE true END` fails exactly when a hidden row holds the guess. Through the real shim
 * and daemon, on connections that separate rows (unsigned, signed, writable): such a condition is
 * refused, and the refusal reads the same whether or not a hidden row matches; ordinary
 * conditions still answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { addShopConnections, addSignedConnection, createPgLogin, type PgLogin } from '../helpers/pg-sessions.js';
import { scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const TAG = `fix_leakyqual_${process.pid}`;
const AGENT = `${TAG}_agent`;
const SIGNED_SCHEMA = `${TAG}_sig`;
const UNSIGNED = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

const OBJECTS = [
  'CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, note text, placed timestamptz NOT NULL DEFAULT now())',
  "INSERT INTO orders (id, customer_id, note) VALUES (1, 1, 'mine'), (2, 2, 'hidden-note-B'), (3, 2, 'other-B')",
  'CREATE TABLE items (order_id int, customer_id int NOT NULL, sku text)',
  "INSERT INTO items VALUES (1, 1, 'sku-mine'), (2, 2, 'sku-hidden')",
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  'ALTER TABLE items ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON orders USING (${UNSIGNED})`,
  `CREATE POLICY by_customer ON items USING (${UNSIGNED})`,
  // A person's security_barrier view over a table with no policy: the same boundary.
  'CREATE TABLE ledger (id int, customer_id int, note text)',
  "INSERT INTO ledger VALUES (1, 1, 'mine'), (2, 2, 'hidden-note-B')",
  `CREATE VIEW my_ledger WITH (security_barrier) AS SELECT id, note FROM ledger WHERE customer_id = current_setting('mcp.customer_id')::int`,
  'CREATE SEQUENCE cnt',
  // Views pulled up into the caller's query: a column defined on no column of the row, and plain ones.
  "CREATE VIEW flag WITH (security_invoker = true) AS SELECT has_table_privilege('nope', 'select') AS x, 1 AS one",
  "CREATE VIEW flag_sub WITH (security_invoker = true) AS SELECT s.x FROM (SELECT 'nope'::text AS x) s",
  'CREATE VIEW order_items WITH (security_invoker = true) AS SELECT o.id, i.sku FROM orders o JOIN items i ON i.order_id = o.id',
  `GRANT SELECT ON flag, flag_sub, order_items TO ${AGENT}`,
  "CREATE FUNCTION flags() RETURNS SETOF boolean LANGUAGE sql STABLE AS $$ SELECT has_table_privilege('nope', 'select') $$",
  `GRANT SELECT ON orders, items, my_ledger TO ${AGENT}`,
  `GRANT SELECT, INSERT, UPDATE ON orders TO ${AGENT}`,
  `GRANT USAGE, SELECT, UPDATE ON SEQUENCE cnt TO ${AGENT}`,
];

const oracle = (note: string, fails: string): string =>
  `SELECT id FROM orders WHERE CASE WHEN note = '${note}' THEN ${fails} ELSE true END`;

describe.skipIf(!available)('conditions that could run on hidden rows on PostgreSQL', () => {
  let scratch: ScratchPgDatabase | undefined;
  let login: PgLogin | undefined;
  const { scoped, plain, signed, writable } = scopedAndPlainShims({
    async setUp(home) {
      login = await createPgLogin(AGENT);
      scratch = await scratchPgDatabase(TAG, OBJECTS);
      const url = login.url(scratch.url);
      await addShopConnections(home, url, login.password);
      await scratch.db.query(await addSignedConnection(home, url, login.password, SIGNED_SCHEMA));
      await scratch.db.query('CREATE TABLE signed_orders (id int, customer_id int, note text)');
      await scratch.db.query("INSERT INTO signed_orders VALUES (1, 1, 'mine'), (2, 2, 'hidden-note-B')");
      await scratch.db.query('ALTER TABLE signed_orders ENABLE ROW LEVEL SECURITY');
      await scratch.db.query(
        `CREATE POLICY by_customer ON signed_orders USING (customer_id = (SELECT ${SIGNED_SCHEMA}.context('customer_id'))::int)`,
      );
      await scratch.db.query(`GRANT SELECT ON signed_orders TO ${AGENT}`);
    },
    async dispose() {
      await scratch?.drop();
      await login?.drop();
    },
    more: { signed: { connection: 'signed', customer: '1' }, writable: { connection: 'shop_rw', customer: '1' } },
  });

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: Record<string, unknown>[] }).rows;
  };
  const refused = (result: CallToolResult): string => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain('(rule: leaky-condition)');
    expect(text).not.toMatch(/hidden-note-B|other-B|sku-hidden|does not exist/);
    return text;
  };

  it.each([
    ['has_table_privilege', "has_table_privilege('nope', 'select')"],
    ['current_setting', "current_setting('nope') = 'x'"],
    ['regclass input', "'nope'::text::regclass IS NULL"],
    ['date arithmetic on now()', "now() - interval '300000 years' < now()"],
  ])('refuses the CASE oracle through %s, alike whether or not a hidden row matches', async (_, fails) => {
    const hidden = refused(await scoped.call('run_query', { sql: oracle('hidden-note-B', fails) }));
    const absent = refused(await scoped.call('run_query', { sql: oracle('no-such-note', fails) }));
    expect(hidden).toBe(absent);
  });

  it('refuses the OR form and the form with a parameter, naming the function and what to do', async () => {
    const text = refused(
      await scoped.call('run_query', {
        sql: "SELECT id FROM orders WHERE note <> $1 OR has_table_privilege('nope', 'select')",
        params: ['x'],
      }),
    );
    expect(text).toContain('has_table_privilege()');
    expect(text).toMatch(/select list/);
    refused(
      await scoped.call('run_query', {
        sql: "SELECT id FROM orders WHERE CASE WHEN starts_with(note, $1) THEN has_table_privilege('nope', 'select') ELSE true END",
        params: ['h'],
      }),
    );
  });

  it('refuses it in a subquery, a CTE, a sublink, a join condition and a subquery select list pushed down', async () => {
    const fails = "has_table_privilege('nope', 'select')";
    for (const sql of [
      `SELECT * FROM (${oracle('hidden-note-B', fails)}) s`,
      `WITH o AS (${oracle('hidden-note-B', fails)}) SELECT * FROM o`,
      `SELECT 1 WHERE EXISTS (${oracle('hidden-note-B', fails)})`,
      `SELECT o.id FROM items i JOIN orders o ON o.id = i.order_id AND CASE WHEN o.note = 'hidden-note-B' THEN ${fails} ELSE true END`,
      `SELECT id FROM (SELECT id, CASE WHEN note = 'hidden-note-B' THEN ${fails} ELSE true END AS ok FROM orders) s WHERE s.ok`,
      `SELECT o.id FROM orders o WHERE o.id IN (SELECT i.order_id FROM items i WHERE CASE WHEN i.sku = 'sku-hidden' THEN ${fails} ELSE true END)`,
    ]) {
      refused(await scoped.call('run_query', { sql }));
    }
  });

  it('refuses a function of an outer column in a correlated subquery, which the server counts as a constant', async () => {
    const sql =
      "SELECT v.t FROM (VALUES ('nope')) AS v(t) WHERE EXISTS (SELECT FROM orders o WHERE CASE WHEN o.note = 'hidden-note-B' THEN has_table_privilege(t, 'select') ELSE true END)";
    refused(await scoped.call('run_query', { sql }));
  });

  it('refuses it on a signed connection and against a security_barrier view', async () => {
    const fails = "has_table_privilege('nope', 'select')";
    const a = refused(await signed.call('run_query', { sql: oracle('hidden-note-B', fails).replace('orders', 'signed_orders') }));
    const b = refused(await signed.call('run_query', { sql: oracle('no-such-note', fails).replace('orders', 'signed_orders') }));
    expect(a).toBe(b);
    refused(await scoped.call('run_query', { sql: oracle('hidden-note-B', fails).replace('orders', 'my_ledger') }));
  });

  it('refuses nextval in a condition on a writable connection, and the sequence does not move', async () => {
    const before = await scratch?.db.query('SELECT last_value, is_called FROM cnt');
    refused(
      await writable.call('run_query', {
        sql: "SELECT id FROM orders WHERE CASE WHEN customer_id = 2 THEN nextval('cnt') < 0 ELSE true END",
      }),
    );
    const after = await scratch?.db.query('SELECT last_value, is_called FROM cnt');
    expect(after?.rows).toEqual(before?.rows);
  });

  it('answers ordinary conditions, and the same calls in the select list', async () => {
    const ids = (result: CallToolResult) => rowsOf(result).map((row) => row.id);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM orders WHERE note = 'mine' AND customer_id = 1" }))).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM orders WHERE note LIKE 'mi%' AND id IN (1, 2, 3)" }))).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: 'SELECT id FROM orders WHERE placed <= now() AND id = $1', params: [1] }))).toEqual([
      1,
    ]);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM orders WHERE lower(note) = 'mine' AND id = 1 + 0" }))).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: 'SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id' }))).toEqual([1]);
    expect(
      ids(await scoped.call('run_query', { sql: 'SELECT o.id FROM orders o WHERE EXISTS (SELECT FROM items i WHERE i.order_id = o.id)' })),
    ).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: 'SELECT customer_id AS id FROM orders GROUP BY 1 HAVING count(*) > 0' }))).toEqual([
      1,
    ]);
    // An unqualified name in a subquery that is a column of the table it reads is that table's.
    expect(
      ids(
        await scoped.call('run_query', {
          sql: "SELECT id FROM orders WHERE id IN (SELECT order_id FROM items WHERE lower(sku) = 'sku-mine')",
        }),
      ),
    ).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: 'SELECT id FROM orders WHERE id = 100 * 0.01' }))).toEqual([1]);
    const listed = rowsOf(
      await scoped.call('run_query', { sql: "SELECT id, has_table_privilege('orders', 'select') AS can FROM orders ORDER BY id" }),
    );
    expect(listed).toEqual([{ id: 1, can: true }]);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM my_ledger WHERE note = 'mine'" }))).toEqual([1]);
  });

  it('refuses a sub-select that reads no column of the row, which runs when first reached, alike whether or not a hidden row matches', async () => {
    for (const fails of [
      '(SELECT true LIMIT -1)',
      '(SELECT true OFFSET -1)',
      "(SELECT x FROM has_table_privilege('nope', 'select') x)",
      "(SELECT ('-1'::information_schema.cardinal_number) IS NULL)",
      'EXISTS (SELECT FROM pg_class LIMIT -1)',
    ]) {
      const guess = (prefix: string) => `SELECT id FROM orders WHERE CASE WHEN note ^@ '${prefix}' THEN ${fails} ELSE true END`;
      const hidden = refused(await scoped.call('run_query', { sql: guess('hidden') }));
      const absent = refused(await scoped.call('run_query', { sql: guess('zzz') }));
      expect(hidden).toBe(absent);
      expect(hidden).toContain('sub-select');
      expect(hidden).toMatch(/CTE or a subquery joined in FROM/);
    }
  });

  it('refuses an outer column that a FROM alias list renamed the table column away from', async () => {
    const sql =
      "SELECT (SELECT count(*) FROM orders AS o(id, customer_id, n2) WHERE CASE WHEN o.n2 ^@ 'hidden' THEN has_table_privilege(note, 'select') ELSE true END) FROM (VALUES ('nope')) AS v(note)";
    expect(refused(await scoped.call('run_query', { sql }))).toContain('has_table_privilege()');
  });

  it('refuses a column of a subquery or CTE whose defining expression holds no column of the row', async () => {
    const cond = "CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END";
    for (const sql of [
      `SELECT o.id FROM (SELECT 'nope'::text AS x) v, orders o WHERE ${cond}`,
      `WITH v AS (SELECT 'nope'::text AS x) SELECT o.id FROM v, orders o WHERE ${cond}`,
      `SELECT o.id FROM (VALUES ('nope')) v(x) JOIN orders o ON ${cond}`,
    ]) {
      expect(refused(await scoped.call('run_query', { sql })), sql).toContain('has_table_privilege()');
    }
    const update = `UPDATE orders o SET note = o.note FROM (SELECT 'nope'::text AS x) v WHERE ${cond}`;
    expect(refused(await writable.call('run_query', { sql: update }))).toContain('has_table_privilege()');
  });

  it('answers IN (SELECT ...), a correlated sub-select, a CTE of plain columns, a join, and a computed CTE joined in', async () => {
    const ids = (result: CallToolResult) => rowsOf(result).map((row) => row.id);
    for (const sql of [
      'SELECT id FROM orders WHERE id IN (SELECT i.order_id FROM items i)',
      "SELECT id FROM orders WHERE CASE WHEN note ^@ 'm' THEN id IN (SELECT 1) ELSE true END",
      'SELECT o.id FROM orders o WHERE o.id = (SELECT max(i.order_id) FROM items i WHERE i.order_id = o.id)',
      "WITH c AS (SELECT id, note FROM orders) SELECT c.id FROM c WHERE lower(c.note) = 'mine'",
      "SELECT v.id FROM (SELECT o.id, o.note AS n FROM orders o) v WHERE lower(v.n) = 'mine'",
      "SELECT o.id FROM orders o JOIN items i ON i.order_id = o.id WHERE lower(i.sku) = 'sku-mine'",
      'WITH m AS (SELECT max(id) AS top FROM orders) SELECT o.id FROM orders o, m WHERE o.id <= m.top',
    ]) {
      expect(ids(await scoped.call('run_query', { sql })), sql).toEqual([1]);
    }
  });

  it("refuses a view's column whose definition is not a plain column, and answers a join view's plain columns", async () => {
    const ids = (result: CallToolResult) => rowsOf(result).map((row) => row.id);
    for (const sql of [
      "SELECT o.id FROM flag v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN v.x ELSE true END",
      "SELECT o.id FROM flag_sub v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN has_table_privilege(v.x, 'select') ELSE true END",
    ]) {
      refused(await scoped.call('run_query', { sql }));
    }
    refused(
      await scoped.call('run_query', {
        sql: "SELECT o.id FROM flag v, orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN v.* IS NOT NULL ELSE true END",
      }),
    );
    const text = refused(await scoped.call('run_query', { sql: 'SELECT o.id FROM flag v JOIN orders o ON v.x' }));
    expect(text).toContain('the column flag.x of a view');
    const inlined = refused(
      await scoped.call('run_query', {
        sql: "SELECT o.id FROM flags() f(x), orders o WHERE CASE WHEN o.note ^@ 'hidden' THEN f.x ELSE true END",
      }),
    );
    expect(inlined).toContain('flags(), a SQL function in FROM');
    expect(ids(await scoped.call('run_query', { sql: 'SELECT o.id FROM generate_series(1, 1) g, orders o WHERE o.id = g' }))).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM order_items WHERE lower(sku) = 'sku-mine'" }))).toEqual([1]);
    expect(ids(await scoped.call('run_query', { sql: "SELECT id FROM my_ledger WHERE lower(note) = 'mine'" }))).toEqual([1]);
  });

  it('keeps such conditions where no context names are declared', async () => {
    const result = await plain.call('run_query', { sql: oracle('no-such-note', "has_table_privilege('orders', 'select')") });
    expect(textOf(result)).not.toContain('leaky-condition');
  });
});
