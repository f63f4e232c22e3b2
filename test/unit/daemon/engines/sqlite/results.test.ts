import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteConnection } from '../../../../../daemon/engines/sqlite/index.js';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => {
  db.exec(`CREATE TABLE kinds (i INTEGER, r REAL, t TEXT, b BLOB, n NUMERIC);
    INSERT INTO kinds VALUES (9007199254740993, 2.5, 'grüße 🌍 日本', x'00ff10', NULL);
    INSERT INTO kinds VALUES (-42, -0.125, '', x'', 7);
    CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, active INTEGER);
    INSERT INTO people VALUES (1, 'ada', 1), (2, 'bob', 0), (3, 'cy', 1);`);
});
let conn: SqliteConnection;
beforeAll(async () => {
  conn = await fx.connect();
});
afterAll(() => fx.cleanup());

describe('SQLite results through the worker', () => {
  it('returns every storage class JSON-safe, with declared column types', async () => {
    const result = await conn.execute('SELECT i, r, t, b, n FROM kinds ORDER BY rowid', [], READ);
    expect(result.columns).toEqual([
      { name: 'i', type: 'INTEGER' },
      { name: 'r', type: 'REAL' },
      { name: 't', type: 'TEXT' },
      { name: 'b', type: 'BLOB' },
      { name: 'n', type: 'NUMERIC' },
    ]);
    expect(result.rows).toEqual([
      { i: '9007199254740993', r: 2.5, t: 'grüße 🌍 日本', b: '\\x00ff10', n: null },
      { i: -42, r: -0.125, t: '', b: '\\x', n: 7 },
    ]);
    expect(result).toMatchObject({ rowCount: 2, truncated: false });
    expect(result.affectedRows).toBeUndefined();
  });

  it('binds parameters, booleans as 1 and 0', async () => {
    const byName = await conn.execute('SELECT id FROM people WHERE name = ? OR id = ? ORDER BY id', ['bob', 3], READ);
    expect(byName.rows).toEqual([{ id: 2 }, { id: 3 }]);
    const active = await conn.execute('SELECT name FROM people WHERE active = ? ORDER BY id', [true], READ);
    expect(active.rows).toEqual([{ name: 'ada' }, { name: 'cy' }]);
    const inactive = await conn.execute('SELECT name FROM people WHERE active = ?', [false], READ);
    expect(inactive.rows).toEqual([{ name: 'bob' }]);
    const nul = await conn.execute('SELECT ? IS NULL AS is_null', [null], READ);
    expect(nul.rows).toEqual([{ is_null: 1 }]);
  });
});
