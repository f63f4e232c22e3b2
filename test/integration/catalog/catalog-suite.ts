import { expect, it } from 'vitest';
import type { Harness } from './harness.js';

/**
 * What one engine's fixture holds. Every engine builds the same objects in `schema`:
 * customers (unique index on email), orders (composite primary key, foreign key to customers,
 * comment), order_lines (composite foreign key to orders, index on qty), view big_orders,
 * table "Mixed Case" with column "Odd""Name", table canary (one row); and 2,000 tables
 * t0001..t2000 in `bigSchema` (on `bigConnection`).
 */
export interface CatalogSuiteOptions {
  readonly harness: () => Harness;
  readonly connection: string;
  readonly schema: string;
  readonly bigConnection: string;
  readonly bigSchema: string;
  /** Routines in the fixture schema, by name, with their kind. */
  readonly routines: Readonly<Record<string, string>>;
  /** The engine keeps a cheap row-count estimate (not SQLite). */
  readonly rowEstimates: boolean;
  /** The engine stores table comments (not SQLite). */
  readonly comments: boolean;
  /** A read that would take seconds if it ran. */
  readonly heavySql: string;
  /** A join of orders and customers in the engine's spelling (default: unquoted names). */
  readonly joinSql?: string;
  /** Rows in canary, read outside hanactl. */
  canaryRows(): Promise<number>;
}

const INJECTIONS = [
  `x"; DROP TABLE canary; --`,
  `' OR 1=1 --`,
  'x`; DROP TABLE canary; --',
  `%' UNION SELECT table_name FROM information_schema.tables --`,
];

/** One catalog conformance suite, run per engine (call inside a describe). */
export function runCatalogSuite(o: CatalogSuiteOptions): void {
  const svc = () => o.harness().catalog;
  const connection = o.connection;

  it('lists schemas and names the current one', async () => {
    const list = await svc().schemas({ connection });
    expect(list.schemas).toContain(o.schema);
    expect(list.current).toBe(o.schema);
    expect(list.truncated).toBe(false);
  });

  it('lists tables and views with kind, row estimate and comment, in the current schema by default', async () => {
    const list = await svc().tables({ connection });
    expect(list.schema).toBe(o.schema);
    const byName = Object.fromEntries(list.tables.map((t) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['Mixed Case', 'big_orders', 'canary', 'customers', 'order_lines', 'orders'].sort());
    expect(byName.big_orders?.kind).toBe('view');
    expect(byName.orders?.kind).toBe('table');
    expect(byName.big_orders?.rowEstimate).toBeNull();
    if (o.rowEstimates) expect(typeof byName.customers?.rowEstimate).toBe('number');
    else expect(byName.customers?.rowEstimate).toBeNull();
    expect(byName.orders?.comment).toBe(o.comments ? 'Customer orders' : null);
    expect(list).toMatchObject({ total: 6, truncated: false });
  });

  it('filters by LIKE pattern or plain substring, ignoring case', async () => {
    const names = async (pattern: string) =>
      (await svc().tables({ connection, schema: o.schema, pattern })).tables.map((t) => t.name).sort();
    expect(await names('order%')).toEqual(['order_lines', 'orders']);
    expect(await names('ORDER')).toEqual(['big_orders', 'order_lines', 'orders']);
    expect(await names('mixed_case')).toEqual(['Mixed Case']);
    expect(await names('nothing-like-this')).toEqual([]);
  });

  it('describes columns, a composite primary key, a composite foreign key and indexes', async () => {
    const orders = await svc().describe({ connection, table: 'orders' });
    expect(orders).toMatchObject({ schema: o.schema, table: 'orders', kind: 'table', primaryKey: ['customer_id', 'order_no'] });
    expect(orders.columns.map((c) => c.name)).toEqual(['customer_id', 'order_no', 'total']);
    const total = orders.columns[2];
    expect(total?.type.toLowerCase()).toMatch(/numeric|decimal/);
    expect(total?.nullable).toBe(true);
    expect(total?.default).toMatch(/0/);
    expect(orders.columns[0]?.nullable).toBe(false);
    expect(orders.foreignKeys).toEqual([expect.objectContaining({ columns: ['customer_id'], refTable: 'customers', refColumns: ['id'] })]);

    const lines = await svc().describe({ connection, schema: o.schema, table: 'order_lines' });
    expect(lines.primaryKey).toEqual(['customer_id', 'order_no', 'line_no']);
    expect(lines.foreignKeys).toEqual([
      expect.objectContaining({
        columns: ['customer_id', 'order_no'],
        refSchema: o.schema,
        refTable: 'orders',
        refColumns: ['customer_id', 'order_no'],
      }),
    ]);
    expect(lines.indexes).toContainEqual(
      expect.objectContaining({ name: 'order_lines_qty_idx', columns: ['qty'], unique: false, primary: false }),
    );

    const customers = await svc().describe({ connection, table: 'customers' });
    expect(customers.indexes).toContainEqual(expect.objectContaining({ name: 'customers_email_key', columns: ['email'], unique: true }));
    expect(customers.columns.find((c) => c.name === 'name')?.nullable).toBe(false);

    const view = await svc().describe({ connection, table: 'big_orders' });
    expect(view).toMatchObject({ kind: 'view', primaryKey: [], foreignKeys: [] });
    expect(view.columns.map((c) => c.name)).toEqual(['customer_id', 'order_no', 'total']);
  });

  it('finds mixed-case and quoted names exactly, by a unique case-insensitive match, or as schema.table', async () => {
    const exact = await svc().describe({ connection, table: 'Mixed Case' });
    expect(exact.columns.map((c) => c.name)).toEqual(['id', 'Odd"Name']);
    expect((await svc().describe({ connection, table: 'mixed case' })).table).toBe('Mixed Case');
    expect((await svc().describe({ connection, table: `${o.schema}.orders` })).table).toBe('orders');
    await expect(svc().describe({ connection, table: 'no_such_table' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('lists routines', async () => {
    const list = await svc().routines({ connection });
    expect(Object.fromEntries(list.routines.map((r) => [r.name, r.kind]))).toEqual(o.routines);
    if (Object.keys(o.routines).length === 0) expect(list.note).toMatch(/no stored/);
    const fn = list.routines.find((r) => r.name === 'order_total');
    if (fn) expect(fn.arguments).toMatch(/p_customer/i);
  });

  it('explains a read without running it', async () => {
    const sql = o.joinSql ?? 'SELECT o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.id = 1;';
    const join = await svc().explain({ connection, sql });
    expect(join.text).toMatch(/orders|customers|o\b|c\b/i);
    expect(join.plan).toBeTruthy();
    const started = performance.now();
    await svc().explain({ connection, sql: o.heavySql });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('refuses to explain a write or two statements, before any database work', async () => {
    for (const sql of ['DELETE FROM canary', 'SELECT 1; DROP TABLE canary', 'EXPLAIN ANALYZE DELETE FROM canary']) {
      await expect(svc().explain({ connection, sql })).rejects.toMatchObject({ code: 'STATEMENT_REFUSED' });
    }
    expect(await o.canaryRows()).toBe(1);
  });

  it('samples a few rows with quoted identifiers, saying when more exist', async () => {
    const all = await svc().sample({ connection, table: 'customers' });
    expect(all).toMatchObject({ schema: o.schema, table: 'customers', rowCount: 3, truncated: false });
    expect(all.columns.map((c) => c.name)).toContain('email');
    const two = await svc().sample({ connection, table: 'customers', limit: 2 });
    expect(two).toMatchObject({ rowCount: 2, truncated: true });
    const odd = await svc().sample({ connection, table: 'mixed case' });
    expect(odd.rows).toEqual([{ id: 1, 'Odd"Name': 'quoted' }]);
  });

  it('searches tables, views, columns and routines by name, filtered by kind', async () => {
    const found = await svc().search({ connection, pattern: 'order' });
    const mine = found.hits.filter((h) => h.schema === o.schema);
    expect(
      mine
        .filter((h) => h.kind === 'table')
        .map((h) => h.name)
        .sort(),
    ).toEqual(['order_lines', 'orders']);
    expect(mine.filter((h) => h.kind === 'view').map((h) => h.name)).toEqual(['big_orders']);
    expect(mine).toContainEqual(expect.objectContaining({ kind: 'column', name: 'order_no', table: 'orders' }));
    if (o.routines.order_total) expect(mine).toContainEqual(expect.objectContaining({ kind: 'routine', name: 'order_total' }));
    expect(found.hits.findIndex((h) => h.kind === 'column')).toBeGreaterThan(found.hits.findIndex((h) => h.kind === 'table'));

    const columns = await svc().search({ connection, pattern: 'odd"', kinds: ['column'] });
    expect(columns.hits).toContainEqual(
      expect.objectContaining({ kind: 'column', schema: o.schema, name: 'Odd"Name', table: 'Mixed Case' }),
    );
    expect(columns.hits.every((h) => h.kind === 'column')).toBe(true);
  });

  it('caps a 2,000-table schema at 200 rows with the total, and a pattern narrows it', async () => {
    const big = await svc().tables({ connection: o.bigConnection, schema: o.bigSchema });
    expect(big).toMatchObject({ total: 2000, truncated: true });
    expect(big.tables).toHaveLength(200);
    expect(big.tables[0]?.name).toBe('t0001');
    const narrow = await svc().tables({ connection: o.bigConnection, schema: o.bigSchema, pattern: 't19%' });
    expect(narrow).toMatchObject({ total: 100, truncated: false });
    const hits = await svc().search({ connection: o.bigConnection, pattern: 't1', kinds: ['table'] });
    expect(hits).toMatchObject({ truncated: true });
    expect(hits.hits).toHaveLength(200);
    expect(hits.total).toBeGreaterThanOrEqual(1000);
  });

  it('refuses or defuses injection through table, schema and pattern; the canary survives', async () => {
    for (const bad of INJECTIONS) {
      await expect(svc().describe({ connection, table: bad })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(svc().sample({ connection, table: bad })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      await expect(svc().sample({ connection, schema: bad, table: 'canary' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await svc().tables({ connection, schema: bad })).toMatchObject({ tables: [], total: 0 });
      expect(await svc().tables({ connection, pattern: bad })).toMatchObject({ tables: [], total: 0 });
      expect((await svc().routines({ connection, schema: bad })).routines).toEqual([]);
      expect((await svc().search({ connection, pattern: bad })).hits).toEqual([]);
      expect((await svc().schemas({ connection, pattern: bad })).schemas).toEqual([]);
    }
    expect(await o.canaryRows()).toBe(1);
    expect((await svc().tables({ connection, pattern: 'canary' })).tables.map((t) => t.name)).toEqual(['canary']);
  });
}
