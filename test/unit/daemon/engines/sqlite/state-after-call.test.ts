import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteDriver } from '../../../../../daemon/engines/sqlite/index.js';
import { Pool } from '../../../../../daemon/pools/pool.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { READ, sqliteTestFile, WRITE } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1), (2);'));
afterAll(() => fx.cleanup());

/** Per-connection settings a statement can change, with a value other than the default. */
const SETTINGS: readonly [string, string | number][] = [
  ['foreign_keys', 0],
  ['recursive_triggers', 1],
  ['reverse_unordered_selects', 1],
  ['cache_size', 7],
  ['automatic_index', 0],
  ['defer_foreign_keys', 1],
  ['ignore_check_constraints', 1],
  ['legacy_alter_table', 1],
  ['trusted_schema', 0],
  ['writable_schema', 1],
  ['read_uncommitted', 1],
  ['cell_size_check', 1],
  ['secure_delete', 1],
  ['temp_store', 2],
  ['busy_timeout', 1],
  ['threads', 2],
  ['analysis_limit', 100],
  ['soft_heap_limit', 1000000],
  ['synchronous', 0],
  ['mmap_size', 4096],
  ['wal_autocheckpoint', 7],
];

const read = (name: string) => `SELECT * FROM pragma_${name}`;

describe('connection state a call leaves behind is gone before the next call', () => {
  it.each(SETTINGS)('PRAGMA %s set by one call reads as before in the next', async (name, value) => {
    const conn = await fx.connect();
    const before = await conn.execute(`PRAGMA ${name}`, [], READ);
    await conn.execute(`PRAGMA ${name} = ${value}`, [], WRITE).catch(() => {});
    await expect(conn.execute(`PRAGMA ${name}`, [], READ)).resolves.toEqual(before);
  });

  it('case_sensitive_like (a setting that cannot be read back) is off again', async () => {
    const conn = await fx.connect();
    await conn.execute('PRAGMA case_sensitive_like = ON', [], READ);
    await expect(conn.execute("SELECT 'a' LIKE 'A' AS m", [], READ)).resolves.toMatchObject({ rows: [{ m: 1 }] });
  });

  it('query_only turned off by a read is on again for the next read', async () => {
    const conn = await fx.connect();
    await conn.execute('PRAGMA query_only = OFF', [], READ);
    await expect(conn.execute(read('query_only'), [], READ)).resolves.toMatchObject({ rows: [{ query_only: 1 }] });
  });

  it('temporary tables, views and triggers made by a writable call are dropped', async () => {
    const conn = await fx.connect();
    await conn.execute('CREATE TEMP TABLE scratch (a)', [], WRITE);
    await conn.execute('CREATE TEMP VIEW v AS SELECT 1', [], WRITE);
    // A temporary trigger on a main table would otherwise fire on every later caller's writes.
    await conn.execute('CREATE TEMP TRIGGER wipe AFTER INSERT ON main.t BEGIN DELETE FROM main.t; END', [], WRITE);
    await expect(conn.execute('SELECT count(*) AS c FROM temp.sqlite_schema', [], READ)).resolves.toMatchObject({ rows: [{ c: 0 }] });
    await conn.execute('INSERT INTO t VALUES (3)', [], WRITE);
    await expect(conn.execute('SELECT count(*) AS c FROM t', [], READ)).resolves.toMatchObject({ rows: [{ c: 3 }] });
    await conn.execute('DELETE FROM t WHERE n = 3', [], WRITE);
  });

  it('no database stays attached', async () => {
    const conn = await fx.connect();
    await conn.execute(`ATTACH '${fx.dir}/other.db' AS other`, [], WRITE).catch(() => {});
    await expect(
      conn.execute("SELECT count(*) AS c FROM pragma_database_list WHERE name NOT IN ('main', 'temp')", [], READ),
    ).resolves.toMatchObject({
      rows: [{ c: 0 }],
    });
  });
});

describe('what one caller inserted or changed is not readable by the next on the same connection', () => {
  const LAST = 'SELECT last_insert_rowid() AS id, changes() AS n';

  it.each([
    ['INSERT INTO t VALUES (41), (42)', 2],
    ['UPDATE t SET n = n WHERE n IN (1, 2)', 2],
    ['INSERT INTO t VALUES (43) RETURNING rowid', 1],
    ['DELETE FROM t WHERE n >= 41', 3],
  ] as const)('after %s, last_insert_rowid() and changes() read 0', async (sql, changed) => {
    const conn = await fx.connect();
    const result = await conn.execute(sql, [], WRITE);
    // The caller itself still learns what it did.
    if (sql.includes('RETURNING')) expect(result.rows).toHaveLength(changed);
    else expect(result.affectedRows).toBe(changed);
    await expect(conn.execute(LAST, [], READ)).resolves.toMatchObject({ rows: [{ id: 0, n: 0 }] });
    await expect(conn.execute(LAST, [], WRITE)).resolves.toMatchObject({ rows: [{ id: 0, n: 0 }] });
  });

  it('leaves no table behind and keeps the data as written', async () => {
    const conn = await fx.connect();
    await conn.execute('INSERT INTO t VALUES (44)', [], WRITE);
    await expect(conn.execute('SELECT count(*) AS c FROM temp.sqlite_schema', [], READ)).resolves.toMatchObject({ rows: [{ c: 0 }] });
    await expect(conn.execute('SELECT count(*) AS c FROM t WHERE n = 44', [], READ)).resolves.toMatchObject({ rows: [{ c: 1 }] });
    await conn.execute('DELETE FROM t WHERE n = 44', [], WRITE);
  });
});

describe('SQLite3 Multiple Ciphers settings', () => {
  it.each([
    "SELECT sqlite3mc_config('cipher', 'rc4')",
    "SELECT sqlite3mc_config('default:cipher', 'rc4')",
    "SELECT sqlite3mc_config('cipher')",
    "SELECT sqlite3mc_config('chacha20', 'kdf_iter', 5)",
    "SELECT sqlite3mc_codec_data('cipher_salt')",
    "SELECT fts3_tokenizer('simple')",
    "SELECT load_extension('/nonexistent')",
  ])('%s is refused, and changes nothing for the next call', async (sql) => {
    const conn = await fx.connect();
    const before = await conn.execute('PRAGMA cipher', [], READ);
    await expect(conn.execute(sql, [], READ)).rejects.toMatchObject({ code: expect.stringMatching(/STATEMENT_REFUSED|QUERY_FAILED/) });
    await expect(conn.execute(sql, [], WRITE)).rejects.toMatchObject({ code: expect.stringMatching(/STATEMENT_REFUSED|QUERY_FAILED/) });
    await expect(conn.execute('PRAGMA cipher', [], READ)).resolves.toEqual(before);
  });

  it.each([["PRAGMA cipher = 'rc4'"], ['PRAGMA kdf_iter = 5'], ['PRAGMA legacy = 1'], ["PRAGMA key = 'x'"], ["PRAGMA hexkey = '00ff'"]])(
    '%s (it acts while the statement is prepared) never reaches the next caller',
    async (sql) => {
      const url = parseConnectionUrl(`sqlite:${fx.file}`).target;
      const driver = createSqliteDriver(url, {}, { connectTimeoutMs: 5_000 });
      const pool = new Pool(
        () => driver.connect(),
        { max: 1, min: 0, idleTimeoutMillis: 60_000, acquireTimeoutMillis: 5_000, maxLifetimeMillis: 600_000 },
        'test',
      );
      try {
        const use = async <T>(fn: (c: Awaited<ReturnType<Pool['acquire']>>['connection']) => Promise<T>): Promise<T> => {
          const lease = await pool.acquire();
          try {
            return await fn(lease.connection);
          } finally {
            lease.release();
          }
        };
        const before = await use((c) => c.execute('PRAGMA cipher', [], READ));
        for (const options of [READ, WRITE]) {
          await use((c) => c.execute(sql, [], options)).catch(() => {});
          await expect(use((c) => c.execute('PRAGMA cipher', [], READ))).resolves.toEqual(before);
          await expect(use((c) => c.execute('PRAGMA kdf_iter', [], READ))).resolves.toMatchObject({ rowCount: 1 });
          await expect(use((c) => c.execute('SELECT count(*) AS c FROM t', [], READ))).resolves.toMatchObject({ rows: [{ c: 2 }] });
        }
      } finally {
        await pool.end();
      }
    },
  );
});
