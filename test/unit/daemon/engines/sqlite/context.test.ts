import { afterAll, describe, expect, it } from 'vitest';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) =>
  db.exec("CREATE TABLE orders (id INTEGER, customer TEXT); INSERT INTO orders VALUES (1, 'c1'), (2, 'c2');"),
);
afterAll(() => fx.cleanup());

const withContext = (context: Record<string, string>) => ({ ...READ, context });

describe('mcp_context(name)', () => {
  it('returns the value the call carries, by name in any case, and NULL for a name not set', async () => {
    const conn = await fx.connect();
    await expect(conn.execute("SELECT mcp_context('CUSTOMER_ID') AS v", [], READ)).resolves.toMatchObject({ rows: [{ v: null }] });
    const r = await conn.execute(
      "SELECT mcp_context('CUSTOMER_ID') AS a, mcp_context('customer_id') AS b, mcp_context('OTHER') AS c",
      [],
      withContext({ CUSTOMER_ID: 'c2' }),
    );
    expect(r.rows).toEqual([{ a: 'c2', b: 'c2', c: null }]);
    const scoped = await conn.execute(
      "SELECT id FROM orders WHERE customer = mcp_context('CUSTOMER_ID')",
      [],
      withContext({ CUSTOMER_ID: 'c2' }),
    );
    expect(scoped.rows).toEqual([{ id: 2 }]);
  });

  it('clears every earlier value first, on every call, and reset() clears', async () => {
    const conn = await fx.connect();
    await conn.execute('SELECT 1', [], withContext({ A: '1', B: '2' }));
    await expect(conn.execute("SELECT mcp_context('A') AS a, mcp_context('B') AS b", [], withContext({ B: '3' }))).resolves.toMatchObject({
      rows: [{ a: null, b: '3' }],
    });
    await expect(conn.execute("SELECT mcp_context('B') AS b", [], READ)).resolves.toMatchObject({ rows: [{ b: null }] });
    await conn.setContext({ B: '4' });
    await conn.reset();
    await expect(conn.execute("SELECT mcp_context('B') AS b", [], READ)).resolves.toMatchObject({ rows: [{ b: null }] });
  });

  it('keeps values on their own connection', async () => {
    const a = await fx.connect();
    const b = await fx.connect();
    await expect(b.execute("SELECT mcp_context('X') AS x", [], READ)).resolves.toMatchObject({ rows: [{ x: null }] });
    await expect(a.execute("SELECT mcp_context('X') AS x", [], withContext({ X: 'for a' }))).resolves.toMatchObject({
      rows: [{ x: 'for a' }],
    });
    await expect(b.execute("SELECT mcp_context('X') AS x", [], READ)).resolves.toMatchObject({ rows: [{ x: null }] });
  });
});
