import pg from 'pg';

export const PG_URL = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_URL = process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/**
 * Whether a server the tests need answers. In CI an unreachable server is a failure (the
 * suite must not pass by skipping); elsewhere the tests skip and say what to start.
 */
export async function serverAvailable(kind: 'postgres', url: string = PG_URL): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch (err) {
    if (process.env.CI) throw new Error(`${kind} is not reachable at ${url} in CI: ${(err as Error).message}`);
    console.warn(`Skipping ${kind} tests: no server at ${url}. Start PostgreSQL (pg_ctlcluster 15 main start) to run them.`);
    return false;
  }
}
