import { afterAll, describe, expect, it } from 'vitest';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => {
  db.exec(`CREATE TABLE big (n INTEGER);
    WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 100000) INSERT INTO big SELECT n FROM s;`);
});
afterAll(() => fx.cleanup());

describe('the row cap', () => {
  it('returns maxRows rows of a 100,000-row table and says it truncated', async () => {
    const conn = await fx.connect();
    const result = await conn.execute('SELECT n FROM big ORDER BY n', [], { ...READ, maxRows: 50 });
    expect(result.rowCount).toBe(50);
    expect(result.rows).toHaveLength(50);
    expect(result.rows[49]).toEqual({ n: 50 });
    expect(result.truncated).toBe(true);
  });

  it('does not call a result of exactly maxRows rows truncated', async () => {
    const conn = await fx.connect();
    const result = await conn.execute('SELECT n FROM big WHERE n <= 50', [], { ...READ, maxRows: 50 });
    expect(result).toMatchObject({ rowCount: 50, truncated: false });
  });
});
