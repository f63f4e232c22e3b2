import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../shared/daemon-client.js';

/**
 * The daemon cancels a statement when the shim's HTTP request goes away only if hono's
 * `c.req.raw.signal` aborts then. This pins that behaviour of @hono/node-server on a real
 * Unix socket with the real DaemonClient, so an upgrade that changes it fails here.
 */
describe('a route’s request signal when the client aborts its request', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-abort-'));
  const socket = join(dir, 'd.sock');
  const seen: { aborted: boolean; afterMs: number; reason: unknown }[] = [];
  let server: Server;

  beforeAll(async () => {
    const app = new Hono();
    app.post('/slow', async (c) => {
      await c.req.json();
      const signal = c.req.raw.signal;
      const started = performance.now();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      seen.push({ aborted: signal.aborted, afterMs: performance.now() - started, reason: signal.reason });
      return c.json({ done: true });
    });
    app.post('/fast', async (c) => {
      await c.req.json();
      const signal = c.req.raw.signal;
      setTimeout(() => seen.push({ aborted: signal.aborted, afterMs: 0, reason: signal.reason }), 200);
      return c.json({ done: true });
    });
    server = createAdaptorServer({ fetch: app.fetch }) as Server;
    await new Promise<void>((r) => server.listen(socket, r));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('aborts within moments of the client aborting (keep-alive agent, as the shim uses)', async () => {
    const client = new DaemonClient({ socketPath: socket, clientName: 'test' });
    const controller = new AbortController();
    const call = client.request('POST', '/slow', { x: 1 }, undefined, controller.signal);
    await new Promise((r) => setTimeout(r, 150));
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'QUERY_CANCELLED' });
    const deadline = Date.now() + 2000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(seen[0]).toMatchObject({ aborted: true });
    expect(seen[0]?.afterMs).toBeLessThan(1000);
    client.close();
  });

  it('does not abort a request that was answered', async () => {
    seen.length = 0;
    const client = new DaemonClient({ socketPath: socket, clientName: 'test' });
    await expect(client.request('POST', '/fast', {})).resolves.toEqual({ done: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(seen[0]).toMatchObject({ aborted: false });
    client.close();
  });
});
