/**
 * PostgreSQL's system columns that are a row's physical or transaction coordinates, through the
 * real shim and daemon, on a table under row-level security: where rows are separated, the gaps
 * between a caller's own ctid positions count the rows the policy hides (two between each of
 * customer 1's rows when three customers' rows interleave), max(ctid) bounds the table's size,
 * xmin counts other sessions' transactions, and TABLESAMPLE picks by page. Refused there, in the
 * statement and in a person's view or function it reaches; answered where rows are not separated.
 */
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RlsFixture, refusedOnlyWhereSeparated, rlsScopedAndPlain } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('system columns on PostgreSQL', () => {
  const rls = new RlsFixture({ role: 'hctx_sysc', table: 'sysc_orders' });
  const { scoped, plain } = rlsScopedAndPlain(rls, {
    // A person's view and function over the coordinates, as one might leave them for deduplication.
    objects: [
      `CREATE VIEW ${rls.table}_pos AS SELECT item, ctid AS pos FROM ${rls.table}`,
      `CREATE VIEW ${rls.table}_sample AS SELECT item FROM ${rls.table} TABLESAMPLE SYSTEM (100)`,
      `CREATE FUNCTION ${rls.table}_tx() RETURNS text LANGUAGE sql AS $$ SELECT max(xmin::text) FROM ${rls.table} $$`,
      `GRANT SELECT ON ${rls.table}_pos, ${rls.table}_sample TO ${rls.role}`,
    ],
    dropped: [`DROP VIEW IF EXISTS ${rls.table}_pos, ${rls.table}_sample`, `DROP FUNCTION IF EXISTS ${rls.table}_tx()`],
  });

  it.each([
    ['SELECT item, ctid FROM TABLE_', /system column ctid is a row's physical position/],
    ['SELECT max(ctid) AS last FROM TABLE_', /ctid/],
    ['SELECT (ctid::text::point)[1] AS page FROM TABLE_', /ctid/],
    ['SELECT item FROM TABLE_ ORDER BY ctid', /ctid/],
    ['SELECT (o).ctid FROM TABLE_ o', /ctid/],
    ['SELECT ctid(o) FROM TABLE_ o', /ctid/],
    ['SELECT item, xmin FROM TABLE_', /system column xmin is a transaction or command id/],
    ['SELECT count(*) FROM TABLE_ TABLESAMPLE SYSTEM (50)', /TABLESAMPLE picks rows by the pages/],
    ['SELECT count(*) FROM TABLE_ TABLESAMPLE BERNOULLI (50) REPEATABLE (7)', /TABLESAMPLE/],
  ])('refuses %s where rows are separated, and answers it elsewhere', async (template, why) => {
    const sql = template.replaceAll('TABLE_', rls.table);
    const refusal = await refusedOnlyWhereSeparated({ scoped, plain }, 'system-column', 'run_query', { sql });
    expect(refusal).toMatch(why);
    expect(refusal).toContain("table's own key");
  });

  it("answers the caller's own rows by their key, and tableoid, where rows are separated", async () => {
    const result = await scoped.call('run_query', { sql: `SELECT item, tableoid::regclass::text AS rel FROM ${rls.table} ORDER BY item` });
    expect(result.isError, textOf(result)).toBeFalsy();
    const rows = (result.structuredContent as { rows: { item: string; rel: string }[] }).rows;
    expect(rows.map((r) => r.item)).toEqual(['item-1-1', 'item-1-2', 'item-1-3', 'item-1-4', 'item-1-5']);
    expect(new Set(rows.map((r) => r.rel))).toEqual(new Set([rls.table]));
  });

  it.each([
    ['SELECT item, pos FROM TABLE__pos', 'ctid'],
    ['SELECT count(*) FROM TABLE__sample', 'TABLESAMPLE'],
    ['SELECT TABLE__tx()', 'xmin'],
  ])("the resolve step refuses %s, a person's view or function reading %s, where rows are separated", async (template, column) => {
    const sql = template.replaceAll('TABLE_', rls.table);
    const refusal = await refusedOnlyWhereSeparated({ scoped, plain }, 'system-column', 'run_query', { sql });
    expect(refusal).toContain(`reads ${column} (through the objects it uses)`);
  });
});
