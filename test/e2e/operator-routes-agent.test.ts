import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_CLIENT_NAME } from '../../daemon/mcp-http/mcp-http.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { rawRequest, socketOf } from '../reliability/helpers/daemon-api.js';
import { disposeHome, startLiteDaemon } from '../reliability/helpers/lite-daemon.js';

/**
 * Finding: `POST /v1/shutdown` was accepted from a shim. Every route but what the agent's tools
 * need is the operator's: the shim's and MCP over HTTP's clients are refused there before any
 * handler runs, and the daemon keeps running. The real daemon on its real socket.
 */

const OPERATOR_ROUTES: readonly (readonly [method: string, path: string, body?: unknown])[] = [
  ['POST', '/v1/shutdown', {}],
  ['GET', '/v1/status'],
  ['GET', '/v1/pools'],
  ['GET', '/v1/sessions'],
  ['GET', '/v1/audit'],
  ['GET', '/v1/queries'],
  ['POST', '/v1/queries/q-1/cancel', {}],
  ['POST', '/v1/queries/q-1/approve', {}],
  ['POST', '/v1/queries/q-1/deny', { reason: 'no' }],
  ['POST', '/v1/connections/lite/settings', { approveWrites: false }],
  ['POST', '/v1/connections', { name: 'sneaky', url: 'sqlite::memory:' }],
  ['POST', '/v1/connections/lite/settings', { allowWrite: true }],
  ['DELETE', '/v1/connections/lite'],
  ['POST', '/v1/connections/lite/test', {}],
  ['POST', '/v1/connections/lite/context-sql', {}],
  ['POST', '/v1/keys/rotate', {}],
  ['POST', '/v1/keys/export', { passphrase: 'a long enough passphrase' }],
  ['GET', '/v1/tokens'],
  ['POST', '/v1/tokens', { label: 'mine' }],
  ['DELETE', '/v1/tokens/any'],
  ['GET', '/v1/trust'],
  ['POST', '/v1/trust', { path: '/' }],
  ['POST', '/v1/trust/remove', { path: '/' }],
  ['POST', '/v1/projects/import', { path: '/tmp', connection: 'project:db', as: 'x' }],
  ['GET', '/v1/a-route-added-later'],
];

describe('operator routes and the agent clients', () => {
  const home = new TestHome();
  const data = mkdtempSync(join(tmpdir(), 'hanactl-operator-routes-'));
  let socket: string;
  let pid: number;

  beforeAll(async () => {
    pid = await startLiteDaemon(home, data);
    socket = socketOf(home);
  });
  afterAll(() => disposeHome(home, data));

  const clients = ['hanactl-shim', HTTP_CLIENT_NAME, 'some-other-client'];
  const cases: [client: string, method: string, path: string, body: unknown][] = OPERATOR_ROUTES.flatMap(([method, path, body]) =>
    clients.map((client): [string, string, string, unknown] => [client, method, path, body]),
  );
  it.each(cases)(
    '%s is refused %s %s with a sentence, and nothing happens',
    async (client: string, method: string, path: string, body: unknown) => {
      const res = await rawRequest(socket, { method, path, clientHeader: client, ...(body ? { body: JSON.stringify(body) } : {}) });
      expect(res.status).toBe(403);
      const { error } = JSON.parse(res.body);
      expect(error.code).toBe('FORBIDDEN');
      expect(error.message).toMatch(/^Only a person can .+, with the hanactl command line; no tool can\.$/);
      const health = await rawRequest(socket, { method: 'GET', path: '/v1/health' });
      expect(health.status).toBe(200);
      expect(JSON.parse(health.body).pid).toBe(pid);
    },
  );

  it('the connection the refused calls aimed at is unchanged, and the command line still reaches every operator route', async () => {
    const list = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(JSON.stringify(list)).toContain('lite');
    expect(JSON.stringify(list)).not.toContain('sneaky');
    expect((await rawRequest(socket, { method: 'GET', path: '/v1/status' })).status).toBe(200);
    expect((await rawRequest(socket, { method: 'GET', path: '/v1/audit' })).status).toBe(200);
  });

  it.each([
    ['GET', '/v1/health'],
    ['GET', '/v1/connections'],
    ['GET', '/v1/connections/lite'],
    ['POST', '/v1/query', { connection: 'lite', sql: 'SELECT 1 AS one' }],
    ['POST', '/v1/catalog/tables', { connection: 'lite' }],
    ['POST', '/v1/sessions', { client: { name: 'c' }, pid: 1 }],
  ] as const)('the shim still reaches what its tools need: %s %s', async (method, path, body?: unknown) => {
    const res = await rawRequest(socket, { method, path, clientHeader: 'hanactl-shim', ...(body ? { body: JSON.stringify(body) } : {}) });
    expect(res.status, res.body).toBeLessThan(300);
  });

  it('a shim cannot stop the daemon; `hanactl daemon stop` can', async () => {
    await rawRequest(socket, { method: 'POST', path: '/v1/shutdown', clientHeader: 'hanactl-shim', body: '{}' });
    expect((await rawRequest(socket, { method: 'GET', path: '/v1/health' })).status).toBe(200);
    await home.ok(['daemon', 'stop']);
  });
});
