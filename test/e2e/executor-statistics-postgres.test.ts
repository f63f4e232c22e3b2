/**
 * The executor's statistics on a connection that separates rows, through the real shim and daemon:
 * a table under row-level security with an index on `item`. An index scan counts the index
 * entries the policy later removes, so `pg_stat_get_xact_tuples_returned` read before and after a
 * `count(*) ... WHERE item = 'x'` rises by one when another customer has 'x', and by none
 * otherwise: an oracle on hidden rows, refused where rows are separated.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RlsFixture, refusedOnlyWhereSeparated, rlsScopedAndPlain } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('executor statistics on PostgreSQL', () => {
  const rls = new RlsFixture({ role: 'hctx_stat', table: 'stat_orders' });
  const index = `${rls.table}_item`;
  const { scoped, plain } = rlsScopedAndPlain(rls, {
    objects: [
      `CREATE INDEX ${index} ON ${rls.table} (item)`,
      // Enough rows that the planner scans the index for one item.
      `INSERT INTO ${rls.table} SELECT 3, 'fill-' || g FROM generate_series(1, 5000) g`,
      `ANALYZE ${rls.table}`,
      // A person's views and function over the statistics, as a DBA might leave them for a dashboard.
      `CREATE VIEW ${rls.table}_io AS SELECT relname, idx_tup_fetch, seq_tup_read FROM pg_stat_user_tables`,
      `CREATE VIEW ${rls.table}_scans AS SELECT pg_stat_get_xact_tuples_returned('${index}'::regclass) AS n`,
      `CREATE FUNCTION ${rls.table}_reads() RETURNS bigint LANGUAGE sql AS $$ SELECT pg_stat_get_xact_tuples_returned('${index}'::regclass) $$`,
      `GRANT SELECT ON ${rls.table}_io, ${rls.table}_scans TO ${rls.role}`,
    ],
    dropped: [`DROP VIEW IF EXISTS ${rls.table}_io, ${rls.table}_scans`, `DROP FUNCTION IF EXISTS ${rls.table}_reads()`],
  });

  /** The oracle: the counter before and after one count of `item` (customer 2 has 'item-2-3'; nobody has 'item-2-9'). */
  const oracle = (item: string) =>
    `SELECT pg_stat_get_xact_tuples_returned('${index}'::regclass) AS before,
            (SELECT count(*) FROM ${rls.table} WHERE item = '${item}') AS visible,
            pg_stat_get_xact_tuples_returned('${index}'::regclass) AS after`;

  const delta = (result: CallToolResult): number => {
    expect(result.isError, textOf(result)).toBeFalsy();
    const [row] = (result.structuredContent as { rows: { before: string; visible: string; after: string }[] }).rows;
    expect(Number(row?.visible)).toBe(0);
    return Number(row?.after) - Number(row?.before);
  };

  it("refuses the counters before and after a count, so a hidden row's value is not told apart from a missing one", async () => {
    const present = await scoped.call('run_query', { sql: oracle('item-2-3') });
    const absent = await scoped.call('run_query', { sql: oracle('item-2-9') });
    // Answered, these differ (a delta of 1 against 0): customer 2's row would show through.
    expect([present.isError, absent.isError], textOf(present)).toEqual([true, true]);
    expect(textOf(present).replace('item-2-3', 'X')).toBe(textOf(absent).replace('item-2-9', 'X'));
    for (const result of [present, absent]) {
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/Refused: pg_stat_get_xact_tuples_returned\(\) reports the executor's statistics/);
      expect(textOf(result)).toContain('(rule: executor-statistics)');
    }
  });

  it.each([
    `SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'TABLE_'`,
    `SELECT idx_tup_read FROM pg_catalog.pg_stat_user_indexes WHERE indexrelname = 'INDEX_'`,
    `SELECT heap_blks_hit FROM pg_statio_user_tables WHERE relname = 'TABLE_'`,
    `SELECT pg_stat_get_xact_blocks_hit('TABLE_'::regclass)`,
    `SELECT tup_returned FROM pg_stat_database WHERE datname = current_database()`,
    `SELECT query_to_xml('SELECT pg_stat_get_xact_tuples_returned(''INDEX_''::regclass)', true, false, '')`,
  ])('refuses %s where rows are separated', async (template) => {
    const sql = template.replaceAll('INDEX_', index).replaceAll('TABLE_', rls.table);
    const result = await scoped.call('run_query', { sql });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/executor-statistics/);
  });

  it.each(['SELECT * FROM TABLE__io', 'SELECT n FROM TABLE__scans', 'SELECT TABLE__reads()'])(
    "the resolve step refuses %s, a person's view or function over the statistics, where rows are separated",
    async (template) => {
      const sql = template.replaceAll('TABLE_', rls.table);
      await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'run_query', { sql });
    },
  );

  it.each([
    ['pg_catalog', 'pg_stat_user_tables'],
    ['pg_catalog', 'pg_statio_user_indexes'],
    ['pg_catalog', 'pg_stat_xact_user_tables'],
  ])('sample_rows refuses %s.%s where rows are separated (read, a call, read again: the same oracle)', async (schema, table) => {
    await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'sample_rows', { schema, table });
  });

  it('keeps the counters where no context names are declared (the role reads them as it would in psql)', async () => {
    // No context value: the policy shows this role no row, and the database counts what it scanned.
    expect(delta(await plain.call('run_query', { sql: oracle('item-2-3') }))).toBe(1);
    expect(delta(await plain.call('run_query', { sql: oracle('item-2-9') }))).toBe(0);
  });

  it("refuses relation sizes where rows are separated (a part's size is its customer's share), keeps them elsewhere", async () => {
    const sql = `SELECT pg_relation_size('${rls.table}') AS bytes`;
    await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'run_query', { sql });
  });

  it.each([
    'SELECT pg_database_size(current_database()) AS bytes',
    'SELECT pg_current_wal_lsn()::text AS lsn',
    'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next_xid',
    'SELECT next_xid, next_oid FROM pg_control_checkpoint()',
  ])(
    "refuses %s, a server-wide counter that moves with every caller's writes, where rows are separated; keeps it elsewhere",
    async (sql) => {
      await refusedOnlyWhereSeparated({ scoped, plain }, 'executor-statistics', 'run_query', { sql });
    },
  );
});
