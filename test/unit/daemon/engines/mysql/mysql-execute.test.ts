import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../../daemon/engines/driver.js';
import { HanactlError } from '../../../../../shared/errors.js';
import { dropTables, failure, makeDriver, openAdmin, READ, skipReason, uniqueName, WRITE } from './mysql-env.js';

describe.skipIf(skipReason !== undefined)('MySQL driver: execute', () => {
  const table = uniqueName('hanactl_exec');
  const big = uniqueName('hanactl_big');
  let conn: DriverConnection;

  const count = async (): Promise<number> => {
    const r = await conn.execute(`SELECT COUNT(*) AS n FROM \`${table}\``, [], READ);
    return r.rows[0]?.n as number;
  };

  beforeAll(async () => {
    const admin = await openAdmin();
    await admin.query(`CREATE TABLE \`${table}\` (id INT PRIMARY KEY, name VARCHAR(100))`);
    await admin.query(`INSERT INTO \`${table}\` VALUES (1, 'alice'), (2, 'bob'), (3, 'carol')`);
    // 100,000 rows from MariaDB's sequence engine, with a recursive CTE as the portable fallback.
    try {
      await admin.query(`CREATE TABLE \`${big}\` AS SELECT seq AS id, REPEAT('x', 100) AS pad FROM seq_1_to_100000`);
    } catch {
      await admin.query('SET SESSION cte_max_recursion_depth = 200000').catch(() => {});
      await admin.query(
        `CREATE TABLE \`${big}\` AS WITH RECURSIVE s(id) AS (SELECT 1 UNION ALL SELECT id + 1 FROM s WHERE id < 100000) SELECT id, REPEAT('x', 100) AS pad FROM s`,
      );
    }
    await admin.end();
    conn = await makeDriver().connect();
  });

  afterAll(async () => {
    await conn?.close();
    await dropTables(table, big);
  });

  it('binds parameters as data, never as SQL', async () => {
    const r = await conn.execute(`SELECT id, name FROM \`${table}\` WHERE name = ? OR id = ?`, ["' OR 1=1 --", 2], READ);
    expect(r.rows).toEqual([{ id: 2, name: 'bob' }]);
    const echo = await conn.execute('SELECT ? AS s, ? AS n, ? AS b, ? AS z', ["' OR 1=1 --", 2.5, true, null], READ);
    expect(echo.rows[0]).toEqual({ s: "' OR 1=1 --", n: 2.5, b: 1, z: null });
    const limited = await conn.execute(`SELECT id FROM \`${table}\` ORDER BY id LIMIT ?`, [2], READ);
    expect(limited.rows).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('writes in autocommit and reports affected rows', async () => {
    const r = await conn.execute(`INSERT INTO \`${table}\` VALUES (?, ?)`, [10, "d'Artagnan"], WRITE);
    expect(r.affectedRows).toBe(1);
    expect(r.columns).toEqual([]);
    expect(r.rowCount).toBe(0);
    // Committed: another session sees it.
    const admin = await openAdmin();
    const [rows] = await admin.query(`SELECT name FROM \`${table}\` WHERE id = 10`);
    await admin.end();
    expect(rows).toEqual([{ name: "d'Artagnan" }]);
    await conn.execute(`DELETE FROM \`${table}\` WHERE id = 10`, [], WRITE);
  });

  it('refuses a write inside a read call at the engine level', async () => {
    const before = await count();
    const err = await failure(conn.execute(`INSERT INTO \`${table}\` VALUES (99, 'mallory')`, [], READ));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.details.nativeCode).toBe(1792); // ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION
    expect(err.details.sqlState).toBe('25006');
    expect(err.details.hint).toMatch(/read-only/);
    expect(await count()).toBe(before);
    expect(conn.broken).toBe(false);
  });

  it('refuses DDL in a read call too (DDL commits implicitly, so the session is read-only as well)', async () => {
    const ddl = uniqueName('hanactl_ddl');
    const err = await failure(conn.execute(`CREATE TABLE \`${ddl}\` (x INT)`, [], READ));
    expect(err.code).toBe('QUERY_FAILED');
    const r = await conn.execute('SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_NAME = ?', [ddl], READ);
    expect(r.rows[0]?.n).toBe(0);
    const del = await failure(conn.execute(`DELETE FROM \`${table}\``, [], READ));
    expect(del.details.nativeCode).toBe(1792);
    expect(await count()).toBe(3);
  });

  it('switches between read and write calls on one connection', async () => {
    await conn.execute(`UPDATE \`${table}\` SET name = ? WHERE id = 1`, ['alicia'], WRITE);
    await expect(conn.execute(`UPDATE \`${table}\` SET name = 'x' WHERE id = 1`, [], READ)).rejects.toThrow(HanactlError);
    const r = await conn.execute(`SELECT name FROM \`${table}\` WHERE id = 1`, [], READ);
    expect(r.rows).toEqual([{ name: 'alicia' }]);
    await conn.execute(`UPDATE \`${table}\` SET name = ? WHERE id = 1`, ['alice'], WRITE);
  });

  it('caps rows at maxRows and says so, without reading 100,000 rows into memory', async () => {
    const started = Date.now();
    const r = await conn.execute(`SELECT * FROM \`${big}\``, [], { ...READ, maxRows: 100 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(r.rowCount).toBe(100);
    expect(r.rows).toHaveLength(100);
    expect(r.truncated).toBe(true);
    expect(r.rows[0]).toEqual({ id: 1, pad: 'x'.repeat(100) });
    // The connection is reusable right away, and nothing of the capped statement still runs.
    expect(conn.broken).toBe(false);
    expect((await conn.execute('SELECT 1 AS one', [], READ)).rows).toEqual([{ one: 1 }]);
    const admin = await openAdmin();
    const [running] = await admin.query(
      "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND COMMAND <> 'Sleep' AND ID <> CONNECTION_ID()",
      [`%FROM \`${big}\`%`],
    );
    await admin.end();
    expect(running).toEqual([]);
  });

  it('caps an endless-looking source just as fast', async () => {
    const started = Date.now();
    const r = await conn.execute(`SELECT a.id, b.id AS id2 FROM \`${big}\` a CROSS JOIN \`${big}\` b`, [], { ...READ, maxRows: 10 });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.rowCount).toBe(10);
    expect(r.truncated).toBe(true);
    expect((await conn.execute('SELECT 2 AS two', [], READ)).rows).toEqual([{ two: 2 }]);
    expect(conn.broken).toBe(false);
  });

  it('is not truncated when the rows fit exactly', async () => {
    const r = await conn.execute(`SELECT id FROM \`${table}\` ORDER BY id`, [], { ...READ, maxRows: 3 });
    expect(r.rowCount).toBe(3);
    expect(r.truncated).toBe(false);
    const none = await conn.execute(`SELECT id FROM \`${table}\` WHERE id < 0`, [], READ);
    expect(none).toMatchObject({ rowCount: 0, rows: [], truncated: false });
    expect(none.columns.map((c) => c.name)).toEqual(['id']);
  });

  it('runs exactly one statement', async () => {
    const err = await failure(conn.execute('SELECT 1; SELECT 2', [], READ));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.details).toMatchObject({ sqlState: '42000', nativeCode: 1064 });
  });

  it('keeps SQLSTATE and the error number, and the connection, on a failed statement', async () => {
    const err = await failure(conn.execute('SELECT * FROM no_such_table_hanactl', [], READ));
    expect(err.code).toBe('QUERY_FAILED');
    expect(err.details).toMatchObject({ sqlState: '42S02', nativeCode: 1146 });
    expect(conn.broken).toBe(false);
    expect((await conn.execute('SELECT 3 AS three', [], READ)).rows).toEqual([{ three: 3 }]);
  });

  it('sends statements the prepare protocol refuses as text, but only without parameters', async () => {
    const name = uniqueName('s');
    await conn.execute(`PREPARE ${name} FROM 'SELECT 41 + 1 AS answer'`, [], READ);
    // A statement prepared in one call is gone by the next: every call ends with a reset.
    expect((await failure(conn.execute(`EXECUTE ${name}`, [], READ))).message).toMatch(/Unknown prepared statement/);
    const err = await failure(conn.execute(`PREPARE ${name} FROM ?`, ['SELECT 1'], READ));
    expect(err.details.nativeCode).toBe(1295);
  });

  it('rolls back a transaction a write call left open when the call ends', async () => {
    const other = await makeDriver().connect();
    try {
      await other.execute('START TRANSACTION', [], WRITE);
      expect(other.dirty).toBe(false);
      expect((await other.execute('SELECT @@in_transaction AS t', [], WRITE)).rows[0]?.t).toBe(0);
      await other.execute(`INSERT INTO \`${table}\` VALUES (50, 'committed')`, [], WRITE);
      expect(await count()).toBe(4);
      await other.execute(`DELETE FROM \`${table}\` WHERE id = 50`, [], WRITE);
      await other.reset();
      expect((await other.execute(`SELECT COUNT(*) AS n FROM \`${table}\``, [], READ)).rows[0]?.n).toBe(3);
    } finally {
      await other.close();
    }
  });

  it('leaves no transaction open after a read call', async () => {
    // The read call's transaction is rolled back, so a later write call starts in autocommit.
    await conn.execute('SELECT GET_LOCK(?, 0) AS got', [table], READ);
    const r = await conn.execute('SELECT @@in_transaction AS t', [], WRITE);
    expect(r.rows[0]?.t).toBe(0);
    await conn.execute('SELECT RELEASE_LOCK(?) AS released', [table], WRITE);
  });

  it('sets the server-side statement limit as a belt under the client timeout', async () => {
    await conn.execute('SELECT 1', [], { ...READ, timeoutMs: 1500 });
    const r = await conn.execute('SELECT @@max_statement_time AS mst, @@time_zone AS tz, @@tx_read_only AS ro', [], {
      ...READ,
      timeoutMs: 1500,
    });
    expect(r.rows[0]).toEqual({ mst: 2.5, tz: '+00:00', ro: 1 });
    const w = await conn.execute('SELECT @@tx_read_only AS ro', [], WRITE);
    expect(w.rows[0]?.ro).toBe(0);
  });
});
