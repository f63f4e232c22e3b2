/**
 * The bound on one server message holds on a TLS connection too: pg hands its parser the TLS
 * socket's data, not the raw socket's. PostgreSQL here may run without TLS, so the test puts a
 * TLS-terminating relay in front of it, as a TLS-only server would be.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverConnection } from '../../daemon/engines/driver.js';
import { loadDriverFactory } from '../../daemon/engines/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

/** Answers PostgreSQL's SSLRequest with `S`, terminates TLS, and relays the plain protocol to `upstream`. */
function tlsRelay(upstream: { host: string; port: number }, key: string, cert: string): Server {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once('data', (first) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) return client.destroy();
      client.write('S');
      const secure = new TLSSocket(client, { isServer: true, key, cert });
      const pgSocket = connect(upstream.port, upstream.host);
      sockets.add(pgSocket);
      secure.pipe(pgSocket).pipe(secure);
      const end = () => {
        secure.destroy();
        pgSocket.destroy();
      };
      secure.on('error', end).on('close', end);
      pgSocket.on('error', end).on('close', end);
    });
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  return server;
}

describe.skipIf(!available)('PostgreSQL over TLS: a row over the message bound fails its call', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-tls-'));
  let relay: Server;
  let conn: DriverConnection;

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const { target } = parseConnectionUrl(PG_URL);
    relay = tlsRelay(
      { host: target.host ?? '127.0.0.1', port: target.port ?? 5432 },
      readFileSync(join(dir, 'key.pem'), 'utf8'),
      readFileSync(join(dir, 'cert.pem'), 'utf8'),
    );
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const port = (relay.address() as { port: number }).port;
    const url = new URL(PG_URL);
    url.host = `127.0.0.1:${port}`;
    url.searchParams.set('sslmode', 'require');
    const tls = parseConnectionUrl(url.toString()).target;
    conn = await (await loadDriverFactory('postgres'))(tls, {}, { connectTimeoutMs: 5000 }).connect();
  });

  afterAll(async () => {
    await conn?.close();
    await new Promise<void>((resolve) => (relay ? relay.close(() => resolve()) : resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads rows within the bound, and refuses a 20 MB row naming the limit; the connection is given up', async () => {
    const options = { maxRows: 10, timeoutMs: 30_000, readOnly: true };
    const within = await conn.execute("SELECT pg_catalog.current_setting('ssl_library') IS NOT NULL AS ok, 1 AS n", [], options);
    expect(within.rows).toEqual([{ ok: true, n: 1 }]);
    await expect(conn.execute("SELECT repeat('x', 20000000) AS a", [], options)).rejects.toThrow(
      /PostgreSQL sent a row \(or message\) of 19\.1 MiB, over the 16 MiB hanactl reads of one row/,
    );
    expect(conn.broken).toBe(true);
  });
});
