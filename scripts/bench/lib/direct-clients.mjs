// The floor: the same query with no MCP in front, on a warm `pg` client in the benchmark's process.
import pg from 'pg';

/** A warm `pg` client in this process: `SELECT 1`, nothing else. */
export async function floorClient(url, cleanup) {
  const client = new pg.Client({ connectionString: url, application_name: 'hanactl-bench-floor' });
  await client.connect();
  cleanup.add('close the floor client', () => client.end());
  return {
    plain: () => client.query('SELECT 1'),
  };
}
