import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../../daemon/engines/driver.js';
import { dropTables, failure, makeDriver, openAdmin, READ, skipReason, uniqueName, WRITE } from './mysql-env.js';

/** What every driver does (row cap, read-only calls, writes, errors, one statement) is the shared suite: test/drivers/mariadb.test.ts. */
describe.skipIf(skipReason !== undefined)('MySQL driver: execute', () => {
  const table = uniqueName('hanactl_exec');
  let conn: DriverConnection;

  const count = async (): Promise<number> => {
    const r = await conn.execute(`SELECT COUNT(*) AS n FROM \`${table}\``, [], READ);
    return r.rows[0]?.n as number;
  };

  beforeAll(async () => {
    const admin = await openAdmin();
    await admin.query(`CREATE TABLE \`${table}\` (id INT PRIMARY KEY, name VARCHAR(100))`);
    await admin.query(`INSERT INTO \`${table}\` VALUES (1, 'alice'), (2, 'bob'), (3, 'carol')`);
    await admin.end();
    conn = await makeDriver().connect();
  });

  afterAll(async () => {
    await conn?.close();
    await dropTables(table);
  });

  it('binds parameters as data, never as SQL', async () => {
    const r = await conn.execute(`SELECT id, name FROM \`${table}\` WHERE name = ? OR id = ?`, ["' OR 1=1 --", 2], READ);
    expect(r.rows).toEqual([{ id: 2, name: 'bob' }]);
    const echo = await conn.execute('SELECT ? AS s, ? AS n, ? AS b, ? AS z', ["' OR 1=1 --", 2.5, true, null], READ);
    expect(echo.rows[0]).toEqual({ s: "' OR 1=1 --", n: 2.5, b: 1, z: null });
    const limited = await conn.execute(`SELECT id FROM \`${table}\` ORDER BY id LIMIT ?`, [2], READ);
    expect(limited.rows).toEqual([{ id: 1 }, { id: 2 }]);
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
