import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

describe('context parameters scope SQLite through the mcp_context() function', () => {
  const home = new TestHome();
  let one: ShimHandle;
  let two: ShimHandle;

  beforeAll(async () => {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE orders (customer_id TEXT NOT NULL, item TEXT NOT NULL);
      WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3)
      INSERT INTO orders SELECT c.n, 'item-' || c.n || '-' || g.n FROM c, c AS g;
      CREATE VIEW my_orders AS SELECT customer_id, item FROM orders WHERE customer_id = mcp_context('CUSTOMER_ID');`);
    db.close();
    await home.ok(['add', 'shop', `sqlite:${file}`, '--context', 'CUSTOMER_ID']);
    one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    two = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '2' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await home.dispose();
  });

  const foreign = (result: Awaited<ReturnType<ShimHandle['call']>>, customer: string): number => {
    expect(result.isError, textOf(result)).toBeFalsy();
    const rows = (result.structuredContent as { rows: { customer_id: string }[] }).rows;
    expect(rows).toHaveLength(3);
    return rows.filter((r) => r.customer_id !== customer).length;
  };

  it('interleaved concurrent calls never see the other caller’s rows, also after a failed call', async () => {
    let leaks = 0;
    for (let batch = 0; batch < 15; batch++) {
      const [a, b, c, d] = await Promise.all([
        one.call('run_query', { sql: 'SELECT * FROM my_orders' }),
        two.call('run_query', { sql: 'SELECT * FROM my_orders' }),
        two.call('run_query', { sql: 'SELECT * FROM my_orders' }),
        one.call('run_query', { sql: 'SELECT * FROM my_orders' }),
      ]);
      leaks += foreign(a!, '1') + foreign(b!, '2') + foreign(c!, '2') + foreign(d!, '1');
      if (batch === 7) expect((await one.call('run_query', { sql: 'SELECT * FROM nope' })).isError).toBe(true);
    }
    expect(leaks).toBe(0);
  });
});
