import type { Connection } from 'mysql2/promise';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../../../../daemon/engines/driver.js';
import { failure, makeDriver, openAdmin, READ, skipReason, TARGET, uniqueName, urlForUser } from './mysql-env.js';

const threadIdOf = (conn: DriverConnection): number => (conn as unknown as { threadId: number }).threadId;

/** Timeout, cancel and connections killed by the server, as every driver has them: test/drivers/mariadb.test.ts. */
describe.skipIf(skipReason !== undefined)('MySQL driver: a timeout without a KILL connection', () => {
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
