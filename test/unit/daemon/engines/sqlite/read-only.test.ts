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
  it('refuses an INSERT on a read call with STATEMENT_REFUSED and leaves the table unchanged', async () => {
    const conn = await fx.connect();
    await expect(conn.execute('INSERT INTO t VALUES (4)', [], READ)).rejects.toMatchObject({
      code: 'STATEMENT_REFUSED',
      details: { rule: 'engine-read-only' },
    });
    expect(countRows()).toBe(3);
    expect(conn.broken).toBe(false);
  });

  it('commits a write on a writable call and reports affectedRows', async () => {
    const conn = await fx.connect();
    const result = await conn.execute('INSERT INTO t VALUES (?), (?)', [10, 11], WRITE);
    expect(result).toEqual({ columns: [], rows: [], rowCount: 0, truncated: false, affectedRows: 2 });
    expect(countRows()).toBe(5);
    const del = await conn.execute('DELETE FROM t WHERE n >= 10', [], WRITE);
    expect(del.affectedRows).toBe(2);
    expect(countRows()).toBe(3);
  });

  it('returns rows of a writable call that reads', async () => {
    const conn = await fx.connect();
    await expect(conn.execute('SELECT count(*) AS c FROM t', [], WRITE)).resolves.toMatchObject({ rows: [{ c: 3 }] });
  });

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
