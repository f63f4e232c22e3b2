import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type CustomerShims, interleavedLeaks, startCustomerShims } from '../helpers/rls-fixture.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

describe('context parameters scope SQLite through the mcp_context() function', () => {
  const home = new TestHome();
  let shims: CustomerShims;

  beforeAll(async () => {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE orders (customer_id TEXT NOT NULL, item TEXT NOT NULL);
      WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 3)
      INSERT INTO orders SELECT c.n, 'item-' || c.n || '-' || g.n FROM c, c AS g;
      CREATE VIEW my_orders AS SELECT customer_id, item FROM orders WHERE customer_id = mcp_context('CUSTOMER_ID');`);
    db.close();
    await home.ok(['add', '--no-test', 'shop', `sqlite:${file}`, '--context', 'CUSTOMER_ID']);
    shims = await startCustomerShims(home, 'shop');
  });

  afterAll(async () => {
    await shims?.close();
    await home.dispose();
  });

  const select = 'SELECT * FROM my_orders';
  /** Each caller sees exactly its own 3 rows through the view; 2 batches of 20 calls before the failed call and 2 after. */
  const check = { rows: 3, batches: 2 };

  it('interleaved concurrent calls never see the other caller’s rows, also after a failed call', async () => {
    let leaks = await interleavedLeaks(shims.one, shims.two, select, check);
    expect((await shims.one.call('run_query', { sql: 'SELECT * FROM nope' })).isError).toBe(true);
    leaks += await interleavedLeaks(shims.one, shims.two, select, check);
    expect(leaks).toBe(0);
  });
});
