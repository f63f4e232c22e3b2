import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import { MYSQL_URL } from './engines.js';
import { mariadbAccount } from './mariadb-account.js';

/** The test server's URL, and the database it names (the one the tests' objects go in). */
const SERVER = new URL(MYSQL_URL);
export const MYSQL_TEST_DB = SERVER.pathname.slice(1);

/**
 * A session of the test server's own user: in the test database unless `database` names another
 * (or is false, for none); `multipleStatements` as the driver option.
 */
export function openMariadbAdmin({
  database = MYSQL_TEST_DB,
  multipleStatements = false,
}: {
  database?: string | false;
  multipleStatements?: boolean;
} = {}): Promise<mysql.Connection> {
  return mysql.createConnection({
    host: SERVER.hostname,
    port: Number(SERVER.port || 3306),
    user: decodeURIComponent(SERVER.username),
    ...(database ? { database } : {}),
    ...(multipleStatements ? { multipleStatements } : {}),
  });
}

/**
 * A login of the test server with a password, at both '%' and 'localhost' (a client on 127.0.0.1
 * may match either), for a test's connection; `name` is cut to the server's 32 characters.
 */
export class MariadbLogin {
  readonly user: string;
  readonly password = randomBytes(12).toString('hex');

  constructor(name: string) {
    this.user = name.slice(0, 32);
  }

  /** Creates the login at both hosts, and grants it each of `grants` ("SELECT ON db.view", ...). */
  async create(admin: mysql.Connection, grants: readonly string[] = []): Promise<void> {
    for (const host of ['%', 'localhost']) await admin.query(`CREATE USER '${this.user}'@'${host}' IDENTIFIED BY '${this.password}'`);
    await this.grant(admin, grants);
  }

  /** Grants the login, at both hosts, each of `grants` ("SELECT, SHOW VIEW ON db.view", ...). */
  async grant(admin: mysql.Connection, grants: readonly string[]): Promise<void> {
    for (const host of ['%', 'localhost']) for (const grant of grants) await admin.query(`GRANT ${grant} TO '${this.user}'@'${host}'`);
  }

  /** The account the login authenticates as from this machine, quoted for a `DEFINER =` clause (once created). */
  definer(): Promise<string> {
    return mariadbAccount(SERVER, this.user, this.password);
  }

  /** The test database's URL as the login: the password in it (for a pool of a test's own), or not (for `add --password-stdin`). */
  url({ withPassword }: { withPassword: boolean }): string {
    const secret = withPassword ? `:${this.password}` : '';
    return `mariadb://${this.user}${secret}@${SERVER.host}/${MYSQL_TEST_DB}`;
  }

  /** Drops the login at both hosts; what is not there is passed over. */
  async drop(admin: mysql.Connection | undefined): Promise<void> {
    for (const host of ['%', 'localhost']) await admin?.query(`DROP USER IF EXISTS '${this.user}'@'${host}'`).catch(() => {});
  }
}

/** A session running `SELECT SLEEP(60)`, for a test that checks whether a call ends another session's statement. */
export interface SleepingSession {
  /** The session's connection id. */
  readonly id: number;
  /** Whether the server still runs the statement, as `root` sees it. */
  running(): Promise<boolean>;
  /** Kills the statement (a session already gone is passed over), waits for it and closes the session. */
  end(): Promise<void>;
}

/** Starts `SELECT SLEEP(60)` on `conn` and returns once `root` sees it running on the server. */
export async function sleepingSession(root: mysql.Connection, conn: mysql.Connection): Promise<SleepingSession> {
  const id = conn.threadId as number;
  const statement = conn.query('SELECT SLEEP(60) AS slept').then(
    () => 'finished',
    (err: Error) => err.message,
  );
  const running = async () => {
    const [rows] = (await root.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID = ? AND INFO LIKE ?', [
      id,
      'SELECT SLEEP(60)%',
    ])) as unknown as [{ n: number }[]];
    return Number(rows[0]?.n) === 1;
  };
  while (!(await running())) await new Promise((resolve) => setImmediate(resolve));
  return {
    id,
    running,
    async end() {
      await root.query(`KILL QUERY ${id}`).catch(() => {});
      await statement;
      await conn.end();
    },
  };
}
