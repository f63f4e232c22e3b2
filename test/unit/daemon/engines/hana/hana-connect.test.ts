import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HanaDriver } from '../../../../../daemon/engines/hana/hana-driver.js';
import { connectError } from '../../../../../daemon/engines/hana/hana-errors.js';
import { loadHanaClient } from '../../../../../daemon/engines/hana/load-client.js';
import { parseConnectionUrl } from '../../../../../shared/connection-url.js';
import { rejection } from './helpers.js';

/**
 * Connect paths against the real @sap/hana-client and real local sockets; no HANA server is
 * needed, so these always run.
 */

const PASSWORD = 'pl4nted-Secret-7c2d';

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address && typeof address === 'object') resolve(address.port);
      else reject(new Error('no port'));
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function driverFor(port: number, connectTimeoutMs: number, query = ''): HanaDriver {
  const { target } = parseConnectionUrl(`hana://SYSTEM@127.0.0.1:${port}/HXE${query}`);
  return new HanaDriver(target, { password: PASSWORD }, { connectTimeoutMs });
}

describe('HANA connect against local sockets', () => {
  let closedPort = 0;
  const silent = createServer();
  const held: Socket[] = [];
  let silentPort = 0;

  beforeAll(async () => {
    const probe = createServer();
    closedPort = await listen(probe);
    await close(probe);
    silent.on('connection', (socket) => {
      // Accept and never answer, like a firewall that swallows the handshake.
      held.push(socket);
      socket.on('error', () => undefined);
    });
    silentPort = await listen(silent);
  });

  afterAll(async () => {
    for (const socket of held) socket.destroy();
    await close(silent);
  });

  it('fails fast with CONNECT_FAILED on a closed port, naming host:port, without the password', async () => {
    const started = Date.now();
    const err = await rejection(driverFor(closedPort, 5_000).connect());
    const elapsed = Date.now() - started;
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain(`127.0.0.1:${closedPort}`);
    expect(err.message).toMatch(/refused/i);
    expect(err.message).toContain('check the host and port');
    expect(err.message).not.toContain(PASSWORD);
    expect(JSON.stringify(err.toJSON())).not.toContain(PASSWORD);
    expect(err.details.nativeCode).toBeTypeOf('number');
    expect(err.details.sqlState).toBe('HY000');
    expect(elapsed).toBeLessThan(4_000);
  });

  it('gives up within the connect timeout when the listener never answers', async () => {
    const started = Date.now();
    const err = await rejection(driverFor(silentPort, 1_500, '?encrypt=false').connect());
    const elapsed = Date.now() - started;
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).toContain(`127.0.0.1:${silentPort}`);
    expect(err.message).toContain('1500 ms');
    expect(err.message).not.toContain(PASSWORD);
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(8_000);
  });

  it('under load (ten connects pending on the black hole) an abort still completes, before any of them ends', async () => {
    const client = await loadHanaClient();
    const pending = Array.from({ length: 10 }, () => {
      const conn = client.createConnection();
      const done = new Promise<unknown>((resolve) =>
        conn.connect({ serverNode: `127.0.0.1:${silentPort}`, uid: 'SYSTEM', pwd: PASSWORD, connectTimeout: 3_000 }, resolve),
      );
      return { conn, done };
    });
    let connectsEnded = 0;
    for (const p of pending) void p.done.then(() => connectsEnded++);
    // The abort a statement's timeout would send, on one of the busy connections.
    const aborted = await new Promise<unknown>((resolve) => pending[0]?.conn.abort(resolve));
    expect(connectsEnded).toBe(0);
    expect(String((aborted as Error | null)?.message ?? '')).not.toContain(PASSWORD);
    const results = await Promise.all(pending.map((p) => p.done));
    expect(results.every((err) => err instanceof Error)).toBe(true);
  });
});

describe('the driver', () => {
  it('reports DRIVER_UNAVAILABLE with the install command when the client cannot be loaded', async () => {
    const { target } = parseConnectionUrl('hana://u@h');
    const missing = new HanaDriver(
      target,
      {},
      { connectTimeoutMs: 1000 },
      {
        loadClient: () => Promise.reject(new Error("Cannot find package '@sap/hana-client' imported from /x")),
      },
    );
    const err = await rejection(missing.connect());
    expect(err.code).toBe('DRIVER_UNAVAILABLE');
    expect(err.message).toContain('npm install @sap/hana-client');
    expect(err.message).toContain('Cannot find package');
  });

  it('reports DRIVER_UNAVAILABLE when the module has no createConnection', async () => {
    const err = await rejection(loadHanaClient(() => Promise.resolve({ default: {} })));
    expect(err.code).toBe('DRIVER_UNAVAILABLE');
  });

  it('loads the installed @sap/hana-client through a dynamic import', async () => {
    const client = await loadHanaClient();
    expect(typeof client.createConnection).toBe('function');
  });
});

describe('connectError', () => {
  const where = { serverNode: 'db.example.com:30015', databaseName: 'HXE', timeoutMs: 1500 };

  it('scrubs the password even when the client echoes it', () => {
    const raw = Object.assign(new Error(`authentication failed for pwd=${PASSWORD} (hana://u:${PASSWORD}@x)`), {
      code: 10,
      sqlState: '28000',
    });
    const err = connectError(raw, where, [PASSWORD]);
    expect(err.code).toBe('CONNECT_FAILED');
    expect(err.message).not.toContain(PASSWORD);
    expect(err.message).toContain('db.example.com:30015 (tenant HXE)');
    expect(err.message).toContain('check the user name and the stored password');
    expect(err.details).toEqual({ nativeCode: 10, sqlState: '28000' });
  });

  it.each([
    ['Connection failed (RTE:[89006] System call connect failed, rc=111:Connection refused)', 'check the host and port'],
    ['Connect failed (connect timeout expired)', 'No answer within 1500 ms'],
    ['SSL handshake failed: certificate verify failed', 'sslValidateCertificate'],
    ['database HXF not connected', 'tenant database name'],
    ['something else', 'reachable'],
  ])('advises on %j', (message, advice) => {
    expect(connectError(new Error(message), where, []).message).toContain(advice);
  });
});
