import { describe, expect, it } from 'vitest';
import { keyRoutes } from '../../../../daemon/http/key-routes.js';
import type { KeyService } from '../../../../daemon/keys/key-service.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../../../shared/client-header.js';
import { HanactlError } from '../../../../shared/errors.js';

const calls: string[] = [];
const keys = {
  rotate: async () => {
    calls.push('rotate');
    return { keySource: 'keychain', rotatedAt: 'now' };
  },
  exportRegistry: async () => {
    calls.push('export');
    return {};
  },
} as unknown as KeyService;

const app = keyRoutes({ keys });
app.onError((err, c) => (err instanceof HanactlError ? c.json(err.toJSON(), err.status as 403) : c.json({ error: String(err) }, 500)));
const post = (path: string, client: string, body: unknown) =>
  app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [CLIENT_HEADER]: client },
    body: JSON.stringify(body),
  });

describe('the key routes answer only the hanactl command line', () => {
  it.each([
    ['/keys/rotate', {}],
    ['/keys/export', { passphrase: 'long enough passphrase' }],
  ])('refuses %s from the shim’s client (403) and does nothing', async (path, body) => {
    const res = await post(path, 'hanactl-shim', body);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      error: {
        code: 'FORBIDDEN',
        message: expect.stringMatching(/Only a person can change or export the registry key.*hanactl command line/),
      },
    });
    expect(calls).toEqual([]);
  });

  it('serves the command line', async () => {
    expect((await post('/keys/rotate', CLI_CLIENT_NAME, {})).status).toBe(200);
    expect(calls).toEqual(['rotate']);
  });

  it('refuses a short passphrase and unknown fields before anything runs', async () => {
    const short = await post('/keys/export', CLI_CLIENT_NAME, { passphrase: 'short' });
    expect(short.status).toBe(400);
    expect(await short.json()).toMatchObject({ error: { message: expect.stringMatching(/passphrase: use at least 8 characters/) } });
    expect((await post('/keys/rotate', CLI_CLIENT_NAME, { newKey: 'x' })).status).toBe(400);
    expect(calls).toEqual(['rotate']);
  });
});
