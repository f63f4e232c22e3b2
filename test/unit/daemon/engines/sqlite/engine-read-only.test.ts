import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { READ, sqliteTestFile } from './fixtures.js';

/**
 * The engine's own read-only check, apart from the statement lexer: these statements go to the
 * driver directly, as they would if the lexer were fooled into passing them. SQLite is asked
 * (`sqlite3_stmt_readonly`) before anything runs; what it calls read-only but is not (ATTACH,
 * VACUUM INTO, REINDEX) is stopped by the transaction every read runs in or by `query_only`.
 */
const fx = sqliteTestFile((db) =>
  db.exec(`CREATE TABLE t (n INTEGER PRIMARY KEY, s TEXT); INSERT INTO t VALUES (1, 'a'), (2, 'b');
    CREATE INDEX t_s ON t (s); CREATE VIEW v AS SELECT n FROM t;`),
);
afterAll(() => fx.cleanup());

const WRITES = [
  'INSERT INTO t VALUES (3, ?)',
  'INSERT INTO t SELECT n + 10, s FROM t',
  'REPLACE INTO t VALUES (1, ?)',
  "WITH x AS (SELECT 1) UPDATE t SET s = 'z'",
  'DELETE FROM t',
  '/* SELECT */ DELETE FROM t',
  '-- SELECT\nDELETE FROM t',
  'INSERT INTO t VALUES (4, 1) ON CONFLICT DO NOTHING RETURNING n',
  'DELETE FROM t RETURNING *',
  'DROP TABLE t',
  'DROP VIEW v',
  'DROP INDEX t_s',
  'ALTER TABLE t ADD COLUMN c',
  'ALTER TABLE t RENAME TO u',
  'CREATE TABLE u (a)',
  'CREATE TEMP TABLE u (a)',
  'CREATE INDEX i2 ON t (n)',
  'CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END',
  'CREATE VIRTUAL TABLE f USING fts5(x)',
  'PRAGMA user_version = 7',
  'PRAGMA application_id = 7',
  'PRAGMA journal_mode = WAL',
  'PRAGMA journal_mode = OFF',
  'PRAGMA auto_vacuum = 1',
  'PRAGMA page_size = 8192',
  'PRAGMA incremental_vacuum',
  'PRAGMA wal_checkpoint(TRUNCATE)',
  "PRAGMA rekey = 'x'",
  "PRAGMA hexrekey = '00ff'",
  'PRAGMA optimize',
  'VACUUM',
  `VACUUM INTO '${fx.dir}/copy.db'`,
  'ANALYZE',
  'REINDEX',
  'REINDEX t_s',
  `ATTACH '${fx.dir}/new.db' AS n2`,
  'BEGIN IMMEDIATE',
  'COMMIT',
  'SELECT 1; DELETE FROM t',
  "SELECT writefile('x', 'y')",
  "SELECT load_extension('libc')",
];

const snapshot = () => ({
  hash: createHash('sha256').update(readFileSync(fx.file)).digest('hex'),
  files: readdirSync(fx.dir).sort(),
});

describe('a read call on SQLite, lexer bypassed', () => {
  it.each(WRITES)('%s changes neither the file nor the folder', async (sql) => {
    const conn = await fx.connect();
    const before = snapshot();
    const params = sql.includes('?') ? ['q'] : [];
    await conn.execute(sql, params, READ).catch(() => {});
    expect(snapshot()).toEqual(before);
    await expect(conn.execute('SELECT count(*) AS c, max(s) AS s FROM t', [], READ).catch(() => undefined)).resolves.toMatchObject({
      rows: [{ c: 2, s: 'b' }],
    });
  });

  it.each(WRITES.filter((sql) => /^(INSERT|REPLACE|WITH|DELETE|\/\*|--|DROP|ALTER|CREATE|VACUUM|ANALYZE)/.test(sql)))(
    '%s is refused by the engine check before it runs',
    async (sql) => {
      const conn = await fx.connect();
      await expect(conn.execute(sql, sql.includes('?') ? ['q'] : [], READ)).rejects.toMatchObject({
        code: 'STATEMENT_REFUSED',
        details: { rule: 'engine-read-only' },
      });
    },
  );
});
