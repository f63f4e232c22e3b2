import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, MAX_BODY_BYTES } from '../../daemon/http/app.js';
import { loadDriverFactory } from '../../daemon/drivers/index.js';
import { DEFAULT_POOL_OPTIONS } from '../../daemon/pools/pool.js';
import { PoolManager } from '../../daemon/pools/pool-manager.js';
import { QueryService } from '../../daemon/query/query-service.js';
import { ConnectionService } from '../../daemon/registry/connection-service.js';
import { Registry } from '../../daemon/registry/registry.js';
import { SessionTable } from '../../daemon/sessions/session-table.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../shared/client-header.js';

const dir = mkdtempSync(join(tmpdir(), 'hanactl-api-'));
const registry = Registry.open(join(dir, 'registry.db'), randomBytes(32));
const pools = new PoolManager({ pool: DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2000, maxPools: 4, loadDriverFactory });
const connections = new ConnectionService(registry, pools);
const queries = new QueryService({
  resolve: (n) => connections.resolve(n),
  poolFor: (r) => pools.poolFor(r),
  policy: { check: (_s, { allowWrite }) => (allowWrite ? 'write' : 'read') },
});
const errors: unknown[] = [];
const app = createApp({
  health: () => ({ name: 'hanactl', version: 't', pid: 1, uptimeMs: 0, keySource: 'env', socket: 's', home: dir, node: process.version }),
  connections,
  queries,
  sessions: new SessionTable(),
  pools,
  shutdown: () => {},
  onError: (e) => errors.push(e),
});

const call = (method: string, path: string, body?: string, headers: Record<string, string> = { [CLIENT_HEADER]: CLI_CLIENT_NAME }) =>
  app.request(path, { method, headers: { 'content-type': 'application/json', ...headers }, ...(body !== undefined ? { body } : {}) });

describe('the daemon API refuses bad input with a clear error and keeps serving', () => {
  beforeAll(async () => {
    const res = await call('POST', '/v1/connections', JSON.stringify({ name: 'mem', url: 'sqlite::memory:' }));
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await pools.closeAll();
    registry.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a request without the client header (403)', async () => {
    const res = await call('GET', '/v1/health', undefined, {});
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringContaining(CLIENT_HEADER) } });
  });

  it.each([
    ['malformed JSON', '{"connection": "mem", "sql": ', /not valid JSON/],
    ['a wrong type', JSON.stringify({ connection: 'mem', sql: 42 }), /sql: .*string/],
    ['a missing field', JSON.stringify({ connection: 'mem' }), /sql/],
    ['an unknown field', JSON.stringify({ connection: 'mem', sql: 'SELECT 1', drop: true }), /drop/],
    ['a bad connection name', JSON.stringify({ connection: '../etc', sql: 'SELECT 1' }), /connection/],
    ['a negative maxRows', JSON.stringify({ connection: 'mem', sql: 'SELECT 1', maxRows: -1 }), /maxRows/],
    ['an array body', '[]', /body/],
  ])('answers 400 INVALID_REQUEST for %s', async (_what, body, message) => {
    const res = await call('POST', '/v1/query', body);
    expect(res.status).toBe(400);
    const json = (await res.json()) as { error: { code: string; message: string } };
    expect(json.error.code).toBe('INVALID_REQUEST');
    expect(json.error.message).toMatch(message);
  });

  it('answers 413 for a body over the limit', async () => {
    const res = await call('POST', '/v1/query', JSON.stringify({ connection: 'mem', sql: `SELECT '${'x'.repeat(MAX_BODY_BYTES)}'` }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: 'PAYLOAD_TOO_LARGE' } });
  });

  it('answers 404 CONNECTION_NOT_FOUND naming the known connections', async () => {
    const res = await call('POST', '/v1/query', JSON.stringify({ connection: 'ghost', sql: 'SELECT 1' }));
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'CONNECTION_NOT_FOUND', category: 'agent', message: expect.stringContaining('mem') } });
  });

  it('refuses what only a person decides when it does not come from the command line', async () => {
    const shim = { [CLIENT_HEADER]: 'hanactl-shim' };
    const add = await call('POST', '/v1/connections', JSON.stringify({ name: 'sneaky', url: 'sqlite::memory:' }), shim);
    expect(add.status).toBe(403);
    expect(await add.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringContaining('hanactl add') } });
    const widen = await call('POST', '/v1/connections/mem/settings', JSON.stringify({ allowWrite: true }), shim);
    expect(widen.status).toBe(403);
    expect((await call('DELETE', '/v1/connections/mem', undefined, shim)).status).toBe(403);
    // Reading and querying stay open to the shim.
    expect((await call('GET', '/v1/connections', undefined, shim)).status).toBe(200);
    const info = (await (await call('GET', '/v1/connections/mem', undefined, shim)).json()) as { allowWrite: boolean };
    expect(info.allowWrite).toBe(false);
  });

  it('answers 404 for an unknown endpoint', async () => {
    expect((await call('GET', '/v1/nothing')).status).toBe(404);
  });

  it('refuses a bad URL or name when adding, naming the problem', async () => {
    const badUrl = await call('POST', '/v1/connections', JSON.stringify({ name: 'x', url: 'ftp://host' }));
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toMatchObject({ error: { code: 'INVALID_URL', message: expect.stringContaining('ftp') } });
    const badName = await call('POST', '/v1/connections', JSON.stringify({ name: 'a b', url: 'sqlite::memory:' }));
    expect(badName.status).toBe(400);
  });

  it('still serves queries after all of that, with no unexpected errors', async () => {
    const res = await call('POST', '/v1/query', JSON.stringify({ connection: 'mem', sql: 'SELECT 1 AS one' }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ rows: [{ one: 1 }], rowCount: 1, truncated: false });
    expect(errors).toEqual([]);
  });
});
