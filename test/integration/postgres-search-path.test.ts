import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgConfig } from '../../daemon/engines/postgres/index.js';
import { parseConnectionUrl } from '../../shared/connection-url.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');

/** What the server's own session reports for a connection made from a registered URL's search_path. */
async function sessionSearchPath(value: string): Promise<string> {
  const url = new URL(PG_URL);
  url.searchParams.set('search_path', value);
  const { target } = parseConnectionUrl(url.toString());
  const client = new pg.Client(pgConfig(target, { connectTimeoutMs: 5000 }));
  await client.connect();
  try {
    return (await client.query('SHOW search_path')).rows[0].search_path;
  } finally {
    await client.end();
  }
}

describe.skipIf(!available)('a registered search_path reaches the session as written', () => {
  const admin = new pg.Client({ connectionString: PG_URL });
  beforeAll(() => admin.connect());
  afterAll(() => admin.end());

  // Each value as the person writes it, and as the server itself prints it after SET.
  const cases = [
    'sp_app',
    'sp_app, public',
    'sp_app,public',
    'größe, public',
    '報告',
    '"My Schema", public',
    '"a\\b", public',
    '"$user", public',
  ];
  for (const value of cases) {
    it(`keeps ${value}`, async () => {
      const expected = (await admin.query(`SELECT set_config('search_path', $1, false) AS v`, [value])).rows[0].v;
      expect(await sessionSearchPath(value)).toBe(expected);
    });
  }

  it('sends a value that holds a second startup option as one search_path, which the server refuses whole', async () => {
    await expect(sessionSearchPath('sp_app -c role=pg_read_all_settings')).rejects.toThrow(
      'invalid value for parameter "search_path": "sp_app -c role=pg_read_all_settings"',
    );
  });

  it('refuses a control character before connecting, naming the option', async () => {
    await expect(sessionSearchPath('sp_app\npublic')).rejects.toThrow('"search_path" holds a control character');
  });
});
