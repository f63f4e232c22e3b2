import { createConnection } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { rawRequest, socketOf } from '../reliability/helpers/daemon-api.js';
import { daemonLogLines } from '../reliability/helpers/daemon-log.js';
import { killHome, waitFor } from '../reliability/helpers/procs.js';

/**
 * Finding: a client that goes away mid-request was logged at error level ("unexpected error",
 * and a 500 answered to nobody). A client closing its connection is routine: the daemon logs
 * it at info level, and keeps serving. The real daemon, its real socket and log.
 */

/** Sends the head and part of a body, then waits until the daemon has read it, then closes the connection. */
function abandon(socket: string, path: string, head: Record<string, string>, partial: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const conn = createConnection(socket, () => {
      const lines = [`POST ${path} HTTP/1.1`, 'host: localhost', 'x-hanactl-client: hanactl-cli', 'content-type: application/json'];
      for (const [k, v] of Object.entries(head)) lines.push(`${k}: ${v}`);
      conn.write(`${lines.join('\r\n')}\r\n\r\n${partial}`, () => conn.destroy());
    });
    conn.on('close', () => resolve());
    conn.on('error', reject);
  });
}

const levelOf = (line: string) => (JSON.parse(line) as { level: number }).level;

describe('a client that goes away mid-request', () => {
  const home = new TestHome();
  let socket: string;
  beforeAll(async () => {
    await home.ok(['add', '--no-test', 'lite', 'sqlite::memory:']);
    socket = socketOf(home);
  });
  afterAll(async () => {
    await home.dispose();
    killHome(home.dir);
  });

  it.each([
    ['/v1/query', { 'content-length': '4000' }, '{"connection":"lite","sql":"SEL'],
    ['/v1/catalog/tables', { 'transfer-encoding': 'chunked' }, '5\r\n{"con\r\n'],
    ['/v1/connections', { 'content-length': '500' }, '{"name":"half'],
    ['/v1/sessions', { 'content-length': '300' }, '{"client":'],
  ])('on %s is an info line, never an error, and the daemon keeps answering', async (path, head, partial) => {
    const before = daemonLogLines(home.dir).length;
    await abandon(socket, path, head, partial);
    const logged = await waitFor(
      () =>
        daemonLogLines(home.dir)
          .slice(before)
          .find((line) => line.includes('client closed its connection mid-request')),
      15_000,
    );
    expect(logged, 'the info line').toBeDefined();
    expect(levelOf(logged as string)).toBe(30);
    expect(JSON.parse(logged as string).path).toBe(path);
    const fresh = daemonLogLines(home.dir).slice(before);
    expect(fresh.filter((line) => levelOf(line) >= 50)).toEqual([]);
    expect((await rawRequest(socket, { method: 'GET', path: '/v1/health' })).status).toBe(200);
  });
});
