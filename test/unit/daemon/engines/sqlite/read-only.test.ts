import { afterAll, describe, expect, it } from 'vitest';
import { READ, seedDb, sqliteTestFile, WRITE } from './fixtures.js';

const fx = sqliteTestFile((db) => {
  db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2), (3);');
});
afterAll(() => fx.cleanup());

function countRows(): number {
  const db = seedDb(fx.file);
  try {
    return (db.prepare('SELECT count(*) AS c FROM t').get() as { c: number }).c;
  } finally {
    db.close();
  }
}

describe('reads and writes', () => {
  it('opens ?mode=ro read-only: even a writable call cannot write', async () => {
    const conn = await fx.connect('?mode=ro');
    await expect(conn.execute('INSERT INTO t VALUES (4)', [], WRITE)).rejects.toMatchObject({
      code: 'QUERY_FAILED',
      details: { nativeCode: 'SQLITE_READONLY' },
    });
    expect(countRows()).toBe(3);
    await expect(conn.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
  });
});
