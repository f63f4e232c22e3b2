import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../../daemon/http/app.js';
import { cliCommand } from '../../shared/cli-command.js';
import { CLIENT_HEADER } from '../../shared/client-header.js';
import { inProcessDaemon, request } from '../helpers/in-process-daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'hanactl-api-'));
const daemon = await inProcessDaemon(dir, { connectTimeoutMs: 2000, maxPools: 4 });
const app = daemon.app;

const call = (method: string, path: string, body?: string, headers?: Record<string, string>) => request(app, method, path, body, headers);

describe('the daemon API refuses bad input with a clear error and keeps serving', () => {
  beforeAll(async () => {
    const res = await call('POST', '/v1/connections', JSON.stringify({ name: 'mem', url: 'sqlite::memory:' }));
    expect(res.status).toBe(201);
  });
  afterAll(async () => {
    await daemon.close();
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
    expect(await res.json()).toMatchObject({
      error: { code: 'CONNECTION_NOT_FOUND', category: 'agent', message: expect.stringContaining('mem') },
    });
  });

  it('refuses what only a person decides when it does not come from the command line', async () => {
    const shim = { [CLIENT_HEADER]: 'hanactl-shim' };
    const add = await call('POST', '/v1/connections', JSON.stringify({ name: 'sneaky', url: 'sqlite::memory:' }), shim);
    expect(add.status).toBe(403);
    expect(await add.json()).toMatchObject({ error: { code: 'FORBIDDEN', message: expect.stringContaining(`${cliCommand()} add`) } });
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
    expect(daemon.errors).toEqual([]);
  });
});
