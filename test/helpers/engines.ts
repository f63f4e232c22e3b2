import mysql from 'mysql2/promise';
import pg from 'pg';

export const PG_URL = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_URL = process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

const HOW_TO_START = {
  postgres: 'pg_ctlcluster --skip-systemctl-redirect 15 main start',
  mysql: 'start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd',
};

async function probe(kind: 'postgres' | 'mysql', url: string): Promise<void> {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    await client.connect();
    await client.end();
    return;
  }
  const u = new URL(url);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    database: u.pathname.slice(1) || undefined,
    connectTimeout: 3000,
  });
  await conn.end();
}

/**
 * Whether a server the tests need answers. In CI an unreachable server is a failure (the
 * suite must not pass by skipping); elsewhere the tests skip and say what to start.
 */
export async function serverAvailable(
  kind: 'postgres' | 'mysql',
  url: string = kind === 'postgres' ? PG_URL : MYSQL_URL,
): Promise<boolean> {
  try {
    await probe(kind, url);
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`${kind} is not reachable at ${url} in CI: ${(err as Error).message}`);
    console.warn(`Skipping ${kind} tests: no server at ${url}. Start it with: ${HOW_TO_START[kind]}`);
    return false;
  }
}

/** A PostgreSQL database made for one test file, with a client connected to it. */
export interface ScratchPgDatabase {
  /** The URL of the new database (the server's own user). */
  readonly url: string;
  /** A client connected to the new database as the server's own user. */
  readonly db: pg.Client;
  /** Ends the client and drops the database, ending any session still in it. */
  drop(): Promise<void>;
}

/** Creates database `name` on the test server and runs `objects` in it, in order. */
export async function scratchPgDatabase(name: string, objects: readonly string[] = []): Promise<ScratchPgDatabase> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  const db = new pg.Client({ connectionString: url.toString() });
  const drop = async () => {
    await db.end().catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
    await admin.end();
  };
  try {
    await db.connect();
    for (const sql of objects) await db.query(sql);
  } catch (err) {
    await drop();
    throw err;
  }
  return { url: url.toString(), db, drop };
}

/**
 * Runs `statements` in order in a session of the test server's own user, then ends it (roles and
 * other objects outside any one database); with `ignoreErrors`, a statement that fails is passed
 * over (clean-up of what may not be there).
 */
export async function asPgSuperuser(
  statements: readonly string[],
  { ignoreErrors = false }: { ignoreErrors?: boolean } = {},
): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    for (const sql of statements) await (ignoreErrors ? admin.query(sql).catch(() => {}) : admin.query(sql));
  } finally {
    await admin.end();
  }
}
