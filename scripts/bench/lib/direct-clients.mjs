// Contenders with no MCP in front: the floor, the floor doing what the daemon does on the
// database, and the daemon's HTTP API called straight (no shim). The last two only split
// hanactl's time into its parts; they have no goals.
import http from 'node:http';
import pg from 'pg';
import Cursor from 'pg-cursor';

/** A warm `pg` client in this process: `SELECT 1`, nothing else. */
export async function floorClient(url, cleanup) {
  const client = new pg.Client({ connectionString: url, application_name: 'hanactl-bench-floor' });
  await client.connect();
  cleanup.add('close the floor client', () => client.end());
  return {
    plain: () => client.query('SELECT 1'),
    /**
     * The statements the daemon sends for one read call (daemon/drivers/postgres/postgres-connection.ts,
     * `execute` and `#finish`; keep in step): reset + read-only transaction + timeout in one round
     * trip, the statement through a cursor, then rollback and session scrub in one round trip.
     */
    async asDaemon() {
      await client.query('RESET ALL; BEGIN READ ONLY; SET LOCAL statement_timeout = 30000');
      const cursor = client.query(new Cursor('SELECT 1', [], { rowMode: 'array' }));
      await cursor.read(101);
      await cursor.close();
      await client.query('ROLLBACK; SELECT pg_advisory_unlock_all(); DEALLOCATE ALL; UNLISTEN *');
    },
  };
}

/** `POST /v1/query` on the daemon's socket with a keep-alive agent, as the shim does, minus the shim. */
export function daemonApiClient(socketPath, connection, cleanup) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  cleanup.add('close the daemon API agent', () => agent.destroy());
  return () =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ connection, sql: 'SELECT 1' });
      const req = http.request(
        {
          socketPath,
          path: '/v1/query',
          method: 'POST',
          agent,
          headers: { 'x-hanactl-client': 'hanactl-bench', 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d) => (text += d));
          res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`daemon answered ${res.statusCode}: ${text}`))));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
