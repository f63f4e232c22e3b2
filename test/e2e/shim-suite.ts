import { expect, it } from 'vitest';
import { type ShimHandle, textOf } from '../helpers/mcp-client.js';

/**
 * What `run_query` does alike on every engine, through the real shim and daemon: the engine's
 * test file starts them (its active connection read-only) and calls this inside its describe.
 */
export interface ShimSuiteOptions {
  /** The shim of a session whose active connection is read-only and holds `table`. */
  shim(): ShimHandle;
  /** A table with columns `id` and `label`, one row of it with id 2 and a label other than "x". */
  readonly table: string;
  /** The placeholder for the i-th parameter (1-based). */
  placeholder(i: number): string;
  /** A read of more than 100 rows, in order, in one column `n` from 1. */
  readonly manyRows: string;
  /** Rows of `table` whose label is `label`, counted outside hanactl. */
  labelled(label: string): Promise<number>;
  /** What the text of a statement naming a missing table says (the engine's words or code). */
  readonly missingTable: RegExp;
}

/** One run_query suite, run per engine (call inside a describe). */
export function runShimSuite(o: ShimSuiteOptions): void {
  const call = (args: Record<string, unknown>) => o.shim().call('run_query', args);

  it('binds params instead of interpolating them', async () => {
    const result = await call({
      sql: `SELECT id FROM ${o.table} WHERE label = ${o.placeholder(1)} OR id = ${o.placeholder(2)}`,
      params: ["x' OR '1'='1", 2],
    });
    expect(result.structuredContent).toMatchObject({ rows: [{ id: 2 }], rowCount: 1 });
  });

  it('caps rows at maxRows and says the result was truncated', async () => {
    const result = await call({ sql: o.manyRows, maxRows: 5 });
    expect(result.structuredContent).toMatchObject({
      rowCount: 5,
      truncated: true,
      rows: [{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 5 }],
    });
    expect(textOf(result)).toMatch(/more rows exist/);
  });

  it('defaults to 100 rows', async () => {
    expect((await call({ sql: o.manyRows })).structuredContent).toMatchObject({ rowCount: 100, truncated: true });
  });

  it('refuses writes on a read-only connection, saying so, and leaves the data unchanged', async () => {
    for (const sql of [`UPDATE ${o.table} SET label = 'x'`, `INSERT INTO ${o.table} (id, label) VALUES (9, 'x')`]) {
      const result = await call({ sql });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/read-only/);
    }
    expect(await o.labelled('x')).toBe(0);
  });

  it('reports an SQL error as an isError result and keeps serving', async () => {
    const bad = await call({ sql: 'SELECT * FROM no_such_table_here' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(o.missingTable);
    expect((await call({ sql: 'SELECT 1 AS ok' })).structuredContent).toMatchObject({ rows: [{ ok: 1 }] });
  });
}
