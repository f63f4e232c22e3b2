/**
 * The planner's figures on a connection that separates rows, through the real shim and daemon: a
 * table under row-level security, ANALYZEd, whose estimates count every customer's rows.
 */
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RlsFixture, rlsScopedAndPlain } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('planner figures on PostgreSQL', () => {
  const rls = new RlsFixture({ role: 'hctx_plan', table: 'plan_orders' });
  const { scoped, plain } = rlsScopedAndPlain(rls, {
    objects: [`CREATE INDEX ON ${rls.table} (item COLLATE "C")`, `ANALYZE ${rls.table}`],
  });

  it.each([
    `EXPLAIN SELECT * FROM TABLE_ WHERE item >= 'item-3'`,
    `EXPLAIN ANALYZE SELECT * FROM TABLE_ WHERE item >= 'item-3'`,
    `EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM TABLE_ WHERE item COLLATE "C" >= 'item-2'`,
    `SELECT query_to_xml('EXPLAIN SELECT * FROM TABLE_', true, false, '')`,
  ])('run_query refuses %s where rows are separated', async (template) => {
    const result = await scoped.call('run_query', { sql: template.replaceAll('TABLE_', rls.table) });
    expect(result.isError).toBe(true);
    expect(textOf(result)).not.toMatch(/rows=\d|Rows Removed|Plan Rows/);
    expect(textOf(result)).toMatch(/Refused/);
  });

  it('explain_query shows the plan without any row or cost figure', async () => {
    const result = await scoped.call('explain_query', { sql: `SELECT * FROM ${rls.table} WHERE item >= 'item-3'` });
    expect(result.isError).toBeFalsy();
    const text = textOf(result);
    expect(text).toContain(rls.table);
    expect(text).not.toMatch(/cost=|rows=|Plan Rows|Total Cost|Plan Width/);
  });

  it('keeps EXPLAIN ANALYZE where no context names are declared (it shows nothing the role cannot read)', async () => {
    const result = await plain.call('run_query', { sql: `EXPLAIN ANALYZE SELECT * FROM ${rls.table}` });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(/actual/);
    const explained = await plain.call('explain_query', { sql: `SELECT * FROM ${rls.table}` });
    expect(textOf(explained)).toMatch(/rows=/);
  });
});
