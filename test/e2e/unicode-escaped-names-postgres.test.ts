/**
 * Names a SQL or PL/pgSQL function body writes with Unicode escapes, through the real shim and
 * daemon on PostgreSQL. A body may give its own escape character (`U&"!0069nvoices_c2" UESCAPE
 * '!'` is invoices_c2), and the walk's rules key on the names a body reads: a partition read
 * directly, an owner-rights view, pg_class's figures. Each spelling the server accepts is read as
 * the server reads it (any escape character, comments between the pieces, `+XXXXXX`, a doubled
 * escape, a surrogate pair); one the walk cannot read for certain is
 * refused as code it cannot read, on every connection.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { PARTITIONED_INVOICES, RLS_POLICY as POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** A person's SQL function `name` returning the items `select` reads. */
const fn = (name: string, select: string, language = 'sql'): string =>
  language === 'sql'
    ? `CREATE FUNCTION ${name}() RETURNS SETOF text LANGUAGE sql STABLE AS $body$ ${select} $body$`
    : `CREATE FUNCTION ${name}() RETURNS SETOF text LANGUAGE plpgsql STABLE AS $body$ BEGIN RETURN QUERY ${select}; END $body$`;

/** Objects a person created as the tables' owner. */
const OWNED = [
  ...PARTITIONED_INVOICES,
  'CREATE TABLE orders (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO orders VALUES (1, 'order-1'), (2, 'order-2'), (3, 'order-3')",
  'ALTER TABLE orders ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON orders USING (${POLICY})`,
  'ANALYZE',
  // Owner-rights views (not security_invoker): every customer's rows; and one that reads with the caller's rights.
  'CREATE VIEW order_overview AS SELECT customer_id, item FROM orders',
  'CREATE VIEW "order!view" AS SELECT customer_id, item FROM orders',
  'CREATE VIEW "order\u{1F600}" AS SELECT customer_id, item FROM orders',
  'CREATE VIEW mine WITH (security_invoker = true) AS SELECT customer_id, item FROM orders',
  fn('via_uescape', `SELECT item FROM U&"!006Frder_overview" UESCAPE '!'`, 'plpgsql'),
  fn('via_letter', `SELECT item FROM U&"g006Frder_overview" uescape 'g'`),
  fn('via_comment', `SELECT item FROM U&"#006Frder_overview" /* the escape: */ UESCAPE -- below\n '#'`),
  fn('via_plus', `SELECT item FROM U&"*+00006Frder_overview" UESCAPE '*'`),
  fn('via_doubled', `SELECT item FROM U&"order!!view" UESCAPE '!'`),
  fn('via_pair', `SELECT item FROM U&"order!D83D!DE00" UESCAPE '!'`),
  fn('via_default', `SELECT item FROM U&"\\006Frder_overview"`),
  fn('via_figures', `SELECT reltuples::text FROM pg_catalog.U&"pg_!0063lass" UESCAPE '!' WHERE relkind = 'r'`),
  // table_to_xml, spelled with an escape, handed a relation chosen when the function runs.
  `CREATE FUNCTION via_xml(t text) RETURNS SETOF text LANGUAGE sql STABLE AS $body$ SELECT pg_catalog.U&"t!0061ble_to_xml" UESCAPE '!'(t::regclass, true, false, '')::text $body$`,
  // Escapes the server accepts in forms the walk does not read.
  fn('via_estring', `SELECT item FROM U&"!006Frder_overview" UESCAPE E'!'`),
  fn('via_continued', `SELECT item FROM U&"!006Frder_overview" UESCAPE ''\n'!'`),
  fn('via_dollar', `SELECT item FROM U&"!006Frder_overview" UESCAPE $e$!$e$`, 'plpgsql'),
  'CREATE VIEW via_estring_view WITH (security_invoker = true) AS SELECT * FROM via_estring() AS t(item)',
  // Names the caller may read, spelled with an escape: still answered.
  fn('mine_uescape', `SELECT item FROM U&"!006Dine" UESCAPE '!'`),
  // A body the server refuses when it runs (a lone surrogate), made without the check.
  'SET check_function_bodies = off',
  fn('via_surrogate', `SELECT item FROM U&"!D800rder_overview" UESCAPE '!'`),
  'RESET check_function_bodies',
];

const REFUSED = /Refused: .*order_overview|order!view|order\u{1F600}/su;

describe.skipIf(!available)('function bodies that write names with Unicode escapes, on PostgreSQL', () => {
  const db = new RlsOwnerDatabase('fix_uescape');
  const { scoped, plain, writable } = scopedAndPlainShims({
    async setUp(home) {
      const { agent } = db;
      await db.setUp([...OWNED, `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${agent}`], [`GRANT CREATE ON SCHEMA public TO ${agent}`]);
      await db.addScopedAndPlain(home);
      await db.addConnection(home, 'shopw', ['--allow-write', '--context', 'customer_id']);
      await home.ok(['set', 'shopw', '--signed-context']);
    },
    dispose: () => db.dispose(),
    more: { writable: { connection: 'shopw', customer: '1' } },
  });

  const itemsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: Record<string, string>[] }).rows.map((r) => Object.values(r)[0]);
  };

  it("refuses an agent's function on a writable signed-context connection that reads another customer's partition through UESCAPE", async () => {
    const peek = `CREATE FUNCTION agent_peek() RETURNS SETOF text LANGUAGE sql AS $$ SELECT item FROM U&"!0069nvoices_c2" UESCAPE '!' $$`;
    // Every caller of the login shares its schema, so the agent may not create it; made outside hanactl, it is refused when called.
    const created = await writable.call('run_query', { sql: peek });
    expect(created.isError, textOf(created)).toBe(true);
    expect(textOf(created)).toContain('(rule: shared-schema)');
    await db.asSuperuser([peek, `ALTER FUNCTION agent_peek() OWNER TO ${db.agent}`]);
    const result = await writable.call('run_query', { sql: 'SELECT * FROM agent_peek()' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/agent_peek\(\) .*invoices_c2/s);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/inv-2/);
  });

  it.each(['via_uescape', 'via_letter', 'via_comment', 'via_plus', 'via_doubled', 'via_pair', 'via_default'])(
    "refuses a person's function %s() over an owner-rights view on a read-only connection",
    async (name) => {
      const result = await scoped.call('run_query', { sql: `SELECT * FROM ${name}()` });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(REFUSED);
      expect(textOf(result)).toContain('(rule: owner-rights)');
      expect(textOf(result)).not.toMatch(/order-[23]/);
    },
  );

  it("refuses a person's function that reads pg_class's figures through UESCAPE", async () => {
    const result = await scoped.call('run_query', { sql: 'SELECT * FROM via_figures()' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: planner-figures)');
  });

  it("refuses a person's function that hands table_to_xml, spelled with an escape, a relation chosen when it runs", async () => {
    const result = await scoped.call('run_query', { sql: "SELECT * FROM via_xml('invoices_c2')" });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/via_xml\(\) hands table_to_xml/);
    expect(textOf(result)).toContain('(rule: dynamic-sql)');
    expect(textOf(result)).not.toMatch(/inv-2/);
  });

  it.each(['via_estring', 'via_continued', 'via_dollar', 'via_surrogate'])(
    'refuses %s(), whose escape the walk cannot read for certain, on every connection',
    async (name) => {
      for (const caller of [scoped, plain, writable]) {
        const result = await caller.call('run_query', { sql: `SELECT * FROM ${name}()` });
        expect(result.isError, textOf(result)).toBe(true);
        expect(textOf(result)).toMatch(new RegExp(`${name}\\(\\) writes a name or string with Unicode escapes`));
        expect(textOf(result)).toContain('(rule: opaque-function)');
        expect(textOf(result)).not.toMatch(/order-[23]/);
      }
    },
  );

  it('sample_rows refuses a view over such a function', async () => {
    const result = await scoped.call('sample_rows', { schema: 'public', table: 'via_estring_view' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/via_estring\(\), whose body writes a name or string with Unicode escapes/);
    expect(textOf(result)).toContain('(rule: opaque-function)');
  });

  it("answers a function whose escaped name reads with the caller's rights", async () => {
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM mine_uescape()' }))).toEqual(['order-1']);
  });

  it('keeps the owner-rights functions where no context names are declared', async () => {
    expect(itemsOf(await plain.call('run_query', { sql: 'SELECT * FROM via_uescape()' })).sort()).toEqual([
      'order-1',
      'order-2',
      'order-3',
    ]);
  });
});
