import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../../shared/daemon-client.js';

/** A server on a Unix socket that answers after `delayMs` and never closes idle sockets itself. */
describe('the daemon client’s keep-alive sockets', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-keepalive-'));
  const socketPath = join(dir, 's.sock');
  let server: Server;
  let open = 0;
  let delayMs = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      }, delayMs);
    });
    server.keepAliveTimeout = 0;
    server.on('connection', (socket) => {
      open++;
      socket.on('close', () => open--);
    });
    await new Promise<void>((r) => server.listen(socketPath, r));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('closes a socket left idle, from the client side, and opens a fresh one for the next call', async () => {
    const client = new DaemonClient({ socketPath, clientName: 'test', idleSocketMs: 150 });
    delayMs = 0;
    expect(await client.request('GET', '/x')).toEqual({ ok: true });
    expect(open).toBe(1);
    await sleep(600);
    expect(open).toBe(0);
    expect(await client.request('GET', '/x')).toEqual({ ok: true });
    client.close();
  });

  it('never cuts a call that takes longer than the idle limit', async () => {
    const client = new DaemonClient({ socketPath, clientName: 'test', idleSocketMs: 150 });
    delayMs = 700;
    expect(await client.request('GET', '/slow')).toEqual({ ok: true });
    client.close();
  });
});
