/**
 * Where rows are separated on PostgreSQL, through the real shim and daemon: the figures and counters
 * that count hidden rows, reached by routes other than a relation named in FROM. A partitioned table
 * under row-level security with a partition per customer (its pg_class.reltuples is that customer's
 * row count) and a sequence every caller's inserts move. The agent's own statement names a built-in
 * catalog as table_to_xml's string; a person's function (SQL text, PL/pgSQL, BEGIN ATOMIC), view or
 * policy reads pg_class's figures in its body. Each is refused there, and answers where no context
 * names are declared.
 */
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY as POLICY, RlsOwnerDatabase, refusedOnlyWhereSeparated, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** Objects a person may have created as the tables' owner. */
const OWNED = [
  'CREATE TABLE invoices (id serial, customer_id int NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE invoices_c1 PARTITION OF invoices FOR VALUES IN (1)',
  'CREATE TABLE invoices_c2 PARTITION OF invoices FOR VALUES IN (2)',
  'CREATE TABLE invoices_c3 PARTITION OF invoices FOR VALUES IN (3)',
  "INSERT INTO invoices (customer_id, item) VALUES (1, 'inv-1'), (2, 'inv-2-a'), (2, 'inv-2-b'), (2, 'inv-2-c')",
  "INSERT INTO invoices (customer_id, item) SELECT 3, 'inv-3-' || g FROM generate_series(1, 200) g",
  'CREATE INDEX invoices_item ON invoices (item)',
  'ALTER TABLE invoices ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON invoices USING (${POLICY})`,
  'ANALYZE',
  "CREATE FUNCTION est_sql(r regclass) RETURNS real LANGUAGE sql STABLE AS 'SELECT reltuples FROM pg_class WHERE oid = r'",
  'CREATE FUNCTION est_plpgsql(r regclass) RETURNS real LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN (SELECT c.relpages FROM pg_catalog.pg_class c WHERE c.oid = r); END $$',
  'CREATE FUNCTION est_atomic(r regclass) RETURNS real LANGUAGE sql STABLE BEGIN ATOMIC SELECT reltuples FROM pg_class WHERE oid = r; END',
  'CREATE FUNCTION est_row(r regclass) RETURNS text LANGUAGE sql STABLE BEGIN ATOMIC SELECT row_to_json(c)::text FROM pg_class c WHERE c.oid = r; END',
  "CREATE FUNCTION class_xml() RETURNS xml LANGUAGE sql STABLE BEGIN ATOMIC SELECT table_to_xml('pg_catalog.pg_class', true, false, ''); END",
  "CREATE VIEW class_xml_view WITH (security_invoker = true) AS SELECT table_to_xml('pg_catalog.pg_class', true, false, '') AS x",
  'CREATE VIEW class_rows WITH (security_invoker = true) AS SELECT row_to_json(c)::text AS j FROM pg_class c',
  "CREATE VIEW sequences_xml WITH (security_invoker = true) AS SELECT table_to_xml('pg_catalog.pg_sequences', true, false, '') AS x",
  "CREATE FUNCTION names_atomic() RETURNS SETOF name LANGUAGE sql VOLATILE BEGIN ATOMIC SELECT relname FROM pg_class WHERE relname LIKE 'invoices%'; END",
  'CREATE VIEW xid_ages WITH (security_invoker = true) AS SELECT datname, age(datfrozenxid) AS n FROM pg_database',
  'CREATE FUNCTION xid_age() RETURNS int LANGUAGE sql STABLE BEGIN ATOMIC SELECT age(datfrozenxid) FROM pg_database WHERE datname = current_database(); END',
  "CREATE FUNCTION xid_age_sql() RETURNS int LANGUAGE sql STABLE AS 'SELECT age(datfrozenxid) FROM pg_database LIMIT 1'",
  'CREATE FUNCTION xid_age_plpgsql() RETURNS int LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN (SELECT age(d.datfrozenxid) FROM pg_database d LIMIT 1); END $$',
  "CREATE VIEW created_ages WITH (security_invoker = true, security_barrier = true) AS SELECT age(timestamp '2020-01-01') AS n",
  "CREATE VIEW authid_xml WITH (security_invoker = true) AS SELECT table_to_xml('pg_catalog.pg_authid', true, false, '') AS x",
  "CREATE FUNCTION statistic_xml() RETURNS xml LANGUAGE sql STABLE BEGIN ATOMIC SELECT table_to_xmlschema('pg_statistic', true, false, ''); END",
  'CREATE VIEW wal_position WITH (security_invoker = true, security_barrier = true) AS SELECT pg_current_wal_lsn()::text AS lsn, pg_database_size(current_database()) AS bytes',
  'CREATE FUNCTION next_xid() RETURNS text LANGUAGE sql STABLE BEGIN ATOMIC SELECT pg_snapshot_xmax(pg_current_snapshot())::text; END',
  // A policy whose answer depends on a partition's figure: which rows show tells the figure.
  'CREATE TABLE notes (customer_id int NOT NULL, item text NOT NULL)',
  "INSERT INTO notes VALUES (1, 'note-1')",
  'ALTER TABLE notes ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON notes USING (${POLICY} AND (SELECT reltuples FROM pg_catalog.pg_class WHERE relname = 'invoices_c2') > 2)`,
];

describe.skipIf(!available)("pg_class's figures and the server's counters by every route on PostgreSQL", () => {
  const db = new RlsOwnerDatabase('hanactl_figs');
  const { scoped, plain } = scopedAndPlainShims({
    async setUp(home) {
      await db.setUp([
        ...OWNED,
        `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${db.agent}`,
        `GRANT SELECT ON ALL SEQUENCES IN SCHEMA public TO ${db.agent}`,
      ]);
      await db.addScopedAndPlain(home);
    },
    dispose: () => db.dispose(),
  });

  /** The review's yes/no oracle: a counter read through table_to_xml before and after a count of `item`. */
  const oracle = (item: string) => {
    const f = `(xpath('//row[relname="invoices_c3"]/idx_tup_fetch/text()', table_to_xml('pg_catalog.pg_stat_xact_user_tables', true, false, '')))[1]::text`;
    return `SELECT ${f} AS before, (SELECT count(*) FROM invoices WHERE item = '${item}') AS visible, ${f} AS after`;
  };

  it.each([
    [
      "SELECT (xpath('//row[sequencename=\"invoices_id_seq\"]/last_value/text()', table_to_xml('pg_catalog.pg_sequences', true, false, '')))::text[] AS v",
      'executor-statistics',
    ],
    [oracle('inv-3-7'), 'executor-statistics'],
    ["SELECT table_to_xml('pg_catalog.pg_stat_user_tables', true, false, '') AS x", 'executor-statistics'],
    ["SELECT table_to_xml('pg_locks', true, false, '') AS x", 'executor-statistics'],
    [
      "SELECT (xpath('//row[relname=\"invoices_c2\"]/reltuples/text()', table_to_xml('pg_catalog.pg_class', true, false, '')))::text[] AS v",
      'planner-figures',
    ],
  ])("refuses a built-in catalog named as table_to_xml's string: %s", async (sql, rule) => {
    const refusal = await refusedOnlyWhereSeparated({ scoped, plain }, rule, 'run_query', { sql });
    expect(refusal).not.toMatch(/\b20[0-9]\b/);
  });

  it.each([
    "SELECT est_sql('invoices_c2') AS n",
    "SELECT est_plpgsql('invoices_c2') AS n",
    "SELECT est_atomic('invoices_c2') AS n",
    "SELECT est_row('invoices_c2') AS n",
    'SELECT class_xml() AS x',
    'SELECT x FROM class_xml_view',
    'SELECT j FROM class_rows',
    'SELECT * FROM notes',
  ])("the resolve step refuses %s, a person's code over pg_class's figures, where rows are separated", async (sql) => {
    const refusal = await refusedOnlyWhereSeparated({ scoped, plain }, 'planner-figures', 'run_query', { sql });
    expect(refusal).not.toMatch(/\b3\b/);
  });

  it("the resolve step refuses a person's view over pg_sequences named as table_to_xml's string", async () => {
    const result = await scoped.call('run_query', { sql: 'SELECT x FROM sequences_xml' });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
  });

  it.each([
    'SELECT age(datfrozenxid) AS n FROM pg_database',
    "SELECT age('3'::xid) AS n",
    'SELECT n FROM xid_ages',
    'SELECT xid_age() AS n',
    'SELECT xid_age_sql() AS n',
    'SELECT xid_age_plpgsql() AS n',
  ])('refuses %s, the transaction counter through age(xid), where rows are separated; keeps it elsewhere', async (sql) => {
    await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'run_query', { sql });
  });

  it('answers age() of a timestamp, in the statement and in a view', async () => {
    for (const sql of ["SELECT age(timestamp '2020-01-01')::text AS n", 'SELECT n::text FROM created_ages']) {
      const result = await scoped.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBeFalsy();
    }
  });

  it.each(['SELECT x FROM authid_xml', 'SELECT statistic_xml() AS x'])(
    "the resolve step refuses %s, a person's code handing a credential catalog to table_to_xml, on every connection",
    async (sql) => {
      for (const shim of [scoped, plain]) {
        const result = await shim.call('run_query', { sql });
        expect(result.isError, textOf(result)).toBe(true);
        expect(textOf(result)).toContain('(rule: credential-read)');
      }
    },
  );

  it.each(['SELECT lsn FROM wal_position', 'SELECT next_xid() AS n'])(
    "the resolve step refuses %s, a person's code over a server-wide counter, where rows are separated; keeps it elsewhere",
    async (sql) => {
      await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'run_query', { sql });
    },
  );

  it.each([
    ['pg_class', 'planner-figures'],
    ['pg_sequences', 'executor-statistics'],
    ['pg_stat_xact_user_tables', 'executor-statistics'],
  ])('sample_rows refuses pg_catalog.%s where rows are separated', async (table, rule) => {
    const result = await scoped.call('sample_rows', { schema: 'pg_catalog', table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain(`(rule: ${rule})`);
  });

  it("answers a person's function over pg_class's names, and the caller's own rows", async () => {
    const names = await scoped.call('run_query', { sql: 'SELECT names_atomic() AS relname ORDER BY 1' });
    expect(names.isError, textOf(names)).toBeFalsy();
    expect((names.structuredContent as { rows: { relname: string }[] }).rows.map((r) => r.relname)).toContain('invoices_c2');
    const own = await scoped.call('run_query', { sql: 'SELECT item FROM invoices' });
    expect((own.structuredContent as { rows: { item: string }[] }).rows).toEqual([{ item: 'inv-1' }]);
  });
});
