/**
 * Where rows are separated on PostgreSQL, through the real shim and daemon: the parts a table under
 * row-level security keeps its rows in. A partition or inheritance child has policies of its own
 * (none, unless a person made them): the parent's apply only when the parent is read, and
 * `GRANT SELECT ON ALL TABLES IN SCHEMA` grants the children too. A child read directly (by name,
 * through a view, at any depth) is refused, whatever row security it has of its own (another policy
 * than the parent's, FORCE or not: its policies are not its parent's); the parent still answers with
 * the caller's rows.
 * The figures kept per part count the hidden rows too: pg_class's reltuples, relpages and
 * relallvisible of a partition (one customer's row count, readable with no grant on it) and a
 * sequence's last value (every caller's inserts) are refused in each form; pg_class's names, and
 * list_tables (without row estimates), still answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { PARTITIONED_INVOICES, RLS_POLICY as POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** Objects a person may have created as the tables' owner. */
const OWNED = [
  ...PARTITIONED_INVOICES,
  'CREATE TABLE events (customer_id int NOT NULL, item text NOT NULL)',
  'CREATE TABLE events_2026 () INHERITS (events)',
  "INSERT INTO events VALUES (1, 'event-1')",
  "INSERT INTO events_2026 VALUES (2, 'event-2')",
  'ALTER TABLE events ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON events USING (${POLICY})`,
  // Two levels: a partition that is itself partitioned.
  'CREATE TABLE ledger (customer_id int NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE ledger_c2 PARTITION OF ledger FOR VALUES IN (2) PARTITION BY LIST (item)',
  "CREATE TABLE ledger_c2_a PARTITION OF ledger_c2 FOR VALUES IN ('ledger-2')",
  'CREATE TABLE ledger_rest PARTITION OF ledger DEFAULT',
  "INSERT INTO ledger VALUES (1, 'ledger-1'), (2, 'ledger-2')",
  'ALTER TABLE ledger ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON ledger USING (${POLICY})`,
  // Partitions with row security and the policy of their own, the same as the parent's.
  'CREATE TABLE bills (customer_id int NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE bills_c1 PARTITION OF bills FOR VALUES IN (1)',
  'CREATE TABLE bills_c2 PARTITION OF bills FOR VALUES IN (2)',
  "INSERT INTO bills VALUES (1, 'bill-1'), (2, 'bill-2')",
  ...['bills', 'bills_c1', 'bills_c2'].flatMap((t) => [
    `ALTER TABLE ${t} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY by_customer ON ${t} USING (${POLICY})`,
  ]),
  // Children with row security of their own, even FORCE, but another policy than the parent's: on a region.
  'CREATE TABLE inv (customer_id int NOT NULL, region text NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE inv_c1 PARTITION OF inv FOR VALUES IN (1)',
  'CREATE TABLE inv_c2 PARTITION OF inv FOR VALUES IN (2) PARTITION BY LIST (region)',
  "CREATE TABLE inv_c2_eu PARTITION OF inv_c2 FOR VALUES IN ('eu')",
  "INSERT INTO inv VALUES (1, 'eu', 'inv-1'), (2, 'eu', 'inv-2')",
  'CREATE TABLE visits (customer_id int NOT NULL, region text NOT NULL, item text NOT NULL)',
  'CREATE TABLE visits_eu () INHERITS (visits)',
  'CREATE TABLE visits_eu_old () INHERITS (visits_eu)',
  "INSERT INTO visits VALUES (1, 'eu', 'visit-1')",
  "INSERT INTO visits_eu VALUES (2, 'eu', 'visit-2')",
  "INSERT INTO visits_eu_old VALUES (2, 'eu', 'visit-2-old')",
  ...['inv', 'visits'].flatMap((t) => [
    `ALTER TABLE ${t} ENABLE ROW LEVEL SECURITY`,
    `CREATE POLICY by_customer ON ${t} USING (${POLICY})`,
  ]),
  ...['inv_c2', 'inv_c2_eu', 'visits_eu', 'visits_eu_old'].flatMap((t) => [
    `ALTER TABLE ${t} ENABLE ROW LEVEL SECURITY`,
    `ALTER TABLE ${t} FORCE ROW LEVEL SECURITY`,
    `CREATE POLICY by_region ON ${t} USING (region = 'eu')`,
  ]),
  // A parent without row security whose parts have it: reading the parent applies none.
  'CREATE TABLE trips (customer_id int NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE trips_rest PARTITION OF trips DEFAULT PARTITION BY LIST (item)',
  'CREATE TABLE trips_rest_all PARTITION OF trips_rest DEFAULT',
  "INSERT INTO trips VALUES (1, 'trip-1'), (2, 'trip-2')",
  'ALTER TABLE trips_rest_all ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON trips_rest_all USING (${POLICY})`,
  'CREATE VIEW trips_view WITH (security_invoker = true) AS SELECT customer_id, item FROM trips',
  'CREATE VIEW inv_c2_view WITH (security_invoker = true) AS SELECT customer_id, item FROM inv_c2',
  'CREATE VIEW visits_eu_view WITH (security_invoker = true) AS SELECT customer_id, item FROM visits_eu',
  'CREATE VIEW visits_outer WITH (security_invoker = true) AS SELECT * FROM visits_eu_view',
  'CREATE VIEW invoices_c2_view WITH (security_invoker = true) AS SELECT customer_id, item FROM invoices_c2',
  // A column of a type made since initdb: every statement on the table takes the resolve step's full walk.
  'CREATE DOMAIN label AS text',
  'CREATE TABLE tickets (id serial, customer_id int NOT NULL, item label NOT NULL)',
  "INSERT INTO tickets (customer_id, item) SELECT 2, 'ticket-2' FROM generate_series(1, 40)",
  'ALTER TABLE tickets ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON tickets USING (${POLICY})`,
  'ANALYZE',
  'CREATE VIEW part_sizes WITH (security_invoker = true) AS SELECT relname, reltuples FROM pg_class',
  'CREATE VIEW part_names WITH (security_invoker = true) AS SELECT relname, relkind FROM pg_class',
  'CREATE VIEW ticket_counter WITH (security_invoker = true) AS SELECT last_value FROM tickets_id_seq',
];

describe.skipIf(!available)('partitions and inheritance children of a table under row security on PostgreSQL', () => {
  const db = new RlsOwnerDatabase('hanactl_parts');
  const { scoped, plain, writable } = scopedAndPlainShims({
    async setUp(home) {
      const { agent } = db;
      await db.setUp([
        ...OWNED,
        // The usual grant of a read role, which takes in every partition and child.
        `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${agent}`,
        `GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${agent}`,
        `GRANT INSERT ON tickets TO ${agent}`,
        `GRANT USAGE ON tickets_id_seq TO ${agent}`,
      ]);
      await db.addScopedAndPlain(home);
      await db.addConnection(home, 'shopw', ['--allow-write', '--context', 'customer_id']);
    },
    dispose: () => db.dispose(),
    more: { writable: { connection: 'shopw', customer: '1' } },
  });

  const itemsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { item: string }[] }).rows.map((r) => r.item).sort();
  };

  it.each([
    ['SELECT * FROM invoices_c2', /invoices_c2 .*invoices\b/s],
    ['SELECT item FROM invoices_c1 UNION ALL SELECT item FROM invoices_c2', /invoices_c\d .*invoices\b/s],
    ['SELECT * FROM events_2026', /events_2026 .*events\b/s],
    ['SELECT * FROM ledger_c2', /ledger_c2 .*ledger\b/s],
    ['SELECT * FROM ledger_c2_a', /ledger_c2_a .*ledger/s],
    ['SELECT * FROM invoices_c2_view', /invoices_c2 .*invoices\b/s],
    ['SELECT i.item FROM invoices i JOIN invoices_c2 c USING (customer_id)', /invoices_c2 .*invoices\b/s],
    // With row security of their own, another policy or the same: a child's policies are not its parent's.
    ['SELECT * FROM inv_c2', /inv_c2 .*inv\b/s],
    ['SELECT * FROM inv_c2_eu', /inv_c2_eu .*inv/s],
    ['SELECT * FROM inv_c2_view', /inv_c2 .*inv\b/s],
    ['SELECT * FROM visits_eu', /visits_eu .*visits\b/s],
    ['SELECT * FROM visits_eu_old', /visits_eu_old .*visits/s],
    ['SELECT * FROM visits_outer', /visits_eu .*visits\b/s],
    ['SELECT * FROM bills_c2', /bills_c2 .*bills\b/s],
    // A parent without row security over a child that has it.
    ['SELECT * FROM trips', /trips has no row-level security, but its partition or inheritance child trips_rest_all has/],
    ['SELECT * FROM trips_view', /trips_view reads trips: trips has no row-level security/],
  ])('refuses %s where rows are separated', async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/-2/);
  });

  it.each(['invoices_c2', 'events_2026', 'ledger_c2_a', 'inv_c2', 'visits_eu_old', 'bills_c1'])(
    'sample_rows refuses %s where rows are separated',
    async (table) => {
      const result = await scoped.call('sample_rows', { schema: 'public', table });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toContain('(rule: owner-rights)');
      expect(textOf(result)).not.toMatch(/-2/);
    },
  );

  it('says what a person can do: read the parent, or no grant on the child', async () => {
    const text = textOf(await scoped.call('run_query', { sql: 'SELECT * FROM invoices_c2' }));
    expect(text).toMatch(/Read invoices instead/);
    expect(text).toMatch(/REVOKE SELECT ON invoices_c2/);
  });

  it("answers the parents with the caller's rows, their children's included", async () => {
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM invoices' }))).toEqual(['inv-1']);
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM events' }))).toEqual(['event-1']);
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM ledger' }))).toEqual(['ledger-1']);
    expect(itemsOf(await scoped.call('sample_rows', { schema: 'public', table: 'invoices' }))).toEqual(['inv-1']);
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM bills' }))).toEqual(['bill-1']);
    expect(itemsOf(await scoped.call('run_query', { sql: "SELECT * FROM inv WHERE customer_id = 1 AND region = 'eu'" }))).toEqual([
      'inv-1',
    ]);
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM visits' }))).toEqual(['visit-1']);
    expect(itemsOf(await scoped.call('run_query', { sql: 'SELECT * FROM trips_rest_all' }))).toEqual(['trip-1']);
  });

  it.each([
    ["SELECT relname, reltuples FROM pg_class WHERE relname LIKE 'invoices%'", /reltuples/],
    ['SELECT c.relpages FROM pg_class c', /relpages/],
    ['SELECT (c).relallvisible FROM pg_class c', /relallvisible/],
    ["SELECT * FROM pg_class WHERE relname = 'invoices_c2'", /\* over pg_class/],
    ['SELECT row_to_json(c) FROM pg_class c', /whole row/],
    ['SELECT k FROM pg_catalog.pg_class AS c(a, b, c, d, e, f, g, h, i, j, k)', /renamed/],
    ['SELECT x FROM (SELECT reltuples AS x FROM pg_class) s', /reltuples/],
    ['SELECT * FROM part_sizes', /part_sizes/],
  ])('refuses the row figures of pg_class: %s', async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: planner-figures)');
  });

  it.each([
    ['SELECT last_value FROM tickets_id_seq', /tickets_id_seq is a sequence/],
    ['SELECT * FROM public.tickets_id_seq', /tickets_id_seq is a sequence/],
    ['SELECT last_value FROM pg_sequences', /pg_sequences/i],
    ["SELECT pg_sequence_last_value('tickets_id_seq')", /pg_sequence_last_value/],
    ["SELECT pg_catalog.pg_sequence_last_value('tickets_id_seq'::regclass)", /pg_sequence_last_value/],
    ['SELECT * FROM ticket_counter', /ticket_counter reads tickets_id_seq/],
  ])("refuses a sequence's last value: %s", async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
    expect(textOf(result)).not.toMatch(/\b40\b/);
  });

  it.each([
    ["SELECT pg_relation_size('invoices_c2')", /pg_relation_size/],
    ["SELECT pg_catalog.pg_total_relation_size('invoices_c2'::regclass)", /pg_total_relation_size/],
    ["SELECT pg_table_size(c.oid) FROM pg_class c WHERE c.relname = 'invoices_c2'", /pg_table_size/],
    ["SELECT pg_indexes_size('invoices_c2')", /pg_indexes_size/],
  ])("refuses a part's size, its share of the table: %s", async (sql, message) => {
    const result = await scoped.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
  });

  it('writes a table whose default takes the next value of a sequence, on a writable connection', async () => {
    const written = await writable.call('run_query', { sql: "INSERT INTO tickets (customer_id, item) VALUES (1, 'ticket-1')" });
    expect(written.isError, textOf(written)).toBeFalsy();
    const read = await writable.call('run_query', { sql: 'SELECT last_value FROM tickets_id_seq' });
    expect(read.isError, textOf(read)).toBe(true);
    expect(textOf(read)).toContain('(rule: executor-statistics)');
  });

  it("answers pg_class's names and list_tables, without row estimates", async () => {
    const names = await scoped.call('run_query', {
      sql: "SELECT c.relname, c.relkind FROM pg_class c WHERE c.relname LIKE 'invoices%' ORDER BY 1",
    });
    expect((names.structuredContent as { rows: { relname: string }[] }).rows.map((r) => r.relname)).toEqual([
      'invoices',
      'invoices_c1',
      'invoices_c2',
      'invoices_c2_view',
    ]);
    expect(itemsOf(await scoped.call('run_query', { sql: "SELECT relname AS item FROM part_names WHERE relname = 'tickets'" }))).toEqual([
      'tickets',
    ]);
    const listed = await scoped.call('list_tables', { schema: 'public' });
    expect(listed.isError, textOf(listed)).toBeFalsy();
    const tables = (listed.structuredContent as { tables: { name: string; rowEstimate: number | null }[] }).tables;
    expect(tables.map((t) => t.name)).toContain('tickets');
    expect(tables.every((t) => t.rowEstimate === null)).toBe(true);
  });

  it('keeps the children where no context names are declared (the grant is the person’s to make)', async () => {
    expect(itemsOf(await plain.call('run_query', { sql: 'SELECT * FROM invoices_c2' }))).toEqual(['inv-2-a', 'inv-2-b']);
    const figures = await plain.call('run_query', { sql: "SELECT reltuples FROM pg_class WHERE relname = 'tickets'" });
    expect(figures.isError, textOf(figures)).toBeFalsy();
    const counter = await plain.call('run_query', { sql: 'SELECT last_value FROM tickets_id_seq' });
    expect(counter.isError, textOf(counter)).toBeFalsy();
    const size = await plain.call('run_query', { sql: "SELECT pg_relation_size('invoices_c2') AS bytes" });
    expect(size.isError, textOf(size)).toBeFalsy();
    const listed = await plain.call('list_tables', { schema: 'public' });
    const tables = (listed.structuredContent as { tables: { name: string; rowEstimate: number | null }[] }).tables;
    expect(tables.find((t) => t.name === 'tickets')?.rowEstimate).toBe(40);
  });
});
