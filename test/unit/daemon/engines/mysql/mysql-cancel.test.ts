import type { Connection } from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../../daemon/engines/driver.js';
import { HanactlError } from '../../../../../shared/errors.js';
import { failure, makeDriver, openAdmin, READ, skipReason, TARGET, uniqueName, urlForUser, WRITE } from './mysql-env.js';

const threadIdOf = (conn: DriverConnection): number => (conn as unknown as { threadId: number }).threadId;

describe.skipIf(skipReason !== undefined)('MySQL driver: timeout, cancel, and connections killed by the server', () => {
  let admin: Connection;
  const opened: DriverConnection[] = [];
  const open = async (url?: string, password?: string): Promise<DriverConnection> => {
    const conn = await makeDriver(url, password).connect();
    opened.push(conn);
    return conn;
  };

  /** Statements of a connection still running, as the server sees them. */
  const runningOn = async (threadId: number, marker: string): Promise<unknown[]> => {
    const [rows] = await admin.query(
      "SELECT ID, COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ? AND COMMAND <> 'Sleep'",
      [threadId, `%${marker}%`],
    );
    return rows as unknown[];
  };

  beforeAll(async () => {
    admin = await openAdmin();
  });

  afterEach(async () => {
    for (const conn of opened.splice(0)) await conn.close();
  });

  afterAll(async () => {
    await admin?.end();
  });

  for (const mode of [
    { name: 'read', options: READ },
    { name: 'write', options: WRITE },
  ]) {
    it(`stops SLEEP(30) on the server at timeoutMs (${mode.name} call) and the connection works on`, async () => {
      const conn = await open();
      const marker = uniqueName('sleep_marker');
      const started = Date.now();
      const err = await failure(conn.execute(`SELECT SLEEP(30) AS ${marker}`, [], { ...mode.options, timeoutMs: 1000 }));
      const elapsed = Date.now() - started;
      expect(err.code).toBe('QUERY_TIMEOUT');
      expect(err.message).toMatch(/1000 ms/);
      expect(elapsed).toBeGreaterThanOrEqual(950);
      expect(elapsed).toBeLessThan(3000);
      // Gone from the server within timeout + 1 s of the start.
      expect(await runningOn(threadIdOf(conn), marker)).toEqual([]);
      expect(Date.now() - started).toBeLessThanOrEqual(1000 + 1000);
      expect(conn.broken).toBe(false);
      expect((await conn.execute('SELECT 1 AS one', [], READ)).rows).toEqual([{ one: 1 }]);
    });
  }

  it('cancels on an abort signal, on the server too', async () => {
    const conn = await open();
    const marker = uniqueName('abort_marker');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = Date.now();
    const err = await failure(conn.execute(`SELECT SLEEP(30) AS ${marker}`, [], { ...READ, signal: controller.signal }));
    expect(err.code).toBe('QUERY_CANCELLED');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await runningOn(threadIdOf(conn), marker)).toEqual([]);
    expect(conn.broken).toBe(false);
    await conn.ping();
    expect((await conn.execute('SELECT 2 AS two', [], READ)).rows).toEqual([{ two: 2 }]);
  });

  it('does not start a statement whose signal is already aborted', async () => {
    const conn = await open();
    const err = await failure(conn.execute('SELECT 1', [], { ...READ, signal: AbortSignal.abort() }));
    expect(err.code).toBe('QUERY_CANCELLED');
    expect(conn.broken).toBe(false);
  });

  it('is broken after the server kills it while idle, and its next use fails cleanly', async () => {
    const conn = await open();
    await conn.execute('SELECT 1', [], READ);
    await admin.query(`KILL ${threadIdOf(conn)}`);
    const err = await failure(conn.execute('SELECT 1', [], READ));
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain(`${TARGET.host}:${TARGET.port}`);
    expect(conn.broken).toBe(true);
    await expect(conn.ping()).rejects.toBeInstanceOf(HanactlError);
    await expect(conn.reset()).rejects.toBeInstanceOf(HanactlError);
    await conn.close(); // never throws
  });

  it('is broken after the server kills it mid-statement', async () => {
    const conn = await open();
    const id = threadIdOf(conn);
    setTimeout(() => void admin.query(`KILL ${id}`), 300);
    const err = await failure(conn.execute('SELECT SLEEP(10)', [], READ));
    expect(err.code).toBe('CONNECT_FAILED');
    expect(conn.broken).toBe(true);
    // A new connection from the same driver works.
    const next = await open();
    expect((await next.execute('SELECT 3 AS three', [], READ)).rows).toEqual([{ three: 3 }]);
  });

  describe('when the KILL connection cannot be opened', () => {
    const user = uniqueName('hanactl_one');
    const password = `One-${uniqueName('pw')}`;

    beforeAll(async () => {
      // One connection allowed: the KILL QUERY connection is refused.
      await admin.query(`CREATE USER IF NOT EXISTS '${user}'@'%' IDENTIFIED BY '${password}' WITH MAX_USER_CONNECTIONS 1`);
      await admin.query(`GRANT SELECT ON \`${TARGET.database}\`.* TO '${user}'@'%'`);
    });

    afterAll(async () => {
      await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
    });

    it('still times out, marks the connection broken, and the server belt stops the statement', async () => {
      const conn = await open(urlForUser(user), password);
      const id = threadIdOf(conn);
      const marker = uniqueName('belt_marker');
      const started = Date.now();
      const err = await failure(conn.execute(`SELECT SLEEP(30) AS ${marker}`, [], { ...READ, timeoutMs: 800 }));
      expect(err.code).toBe('QUERY_TIMEOUT');
      expect(Date.now() - started).toBeLessThan(3000);
      expect(conn.broken).toBe(true);
      expect(err.message).not.toContain(password);
      // Cut by us, stopped by max_statement_time at the latest: nothing left running.
      const deadline = Date.now() + 3000;
      while ((await runningOn(id, marker)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await runningOn(id, marker)).toEqual([]);
    });
  });
});
