import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

/**
 * The daemon keeps its verdicts on statements it has judged (daemon/policy/verdict-cache.ts). The
 * same text sent again in the same session must still follow what a person changed on the
 * connection meanwhile: made it writable, made it read-only again, declared context values.
 */
const postgres = await serverAvailable('postgres');
const Database = createRequire(import.meta.url)('better-sqlite3-multiple-ciphers');

describe('a statement sent again is judged for the connection as it is now', () => {
  const home = new TestHome();
  let shim: ShimHandle;

  beforeAll(async () => {
    const file = join(home.dir, 'notes.db');
    new Database(file).close();
    await home.ok(['add', '--no-test', 'notes', `sqlite:${file}`]);
    if (postgres) await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    shim = await startShim(home.env, ['--connection', 'notes']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  const run = async (sql: string, connection?: string) => {
    const result = await shim.call('run_query', { sql, ...(connection ? { connection } : {}) });
    return result.isError ? textOf(result) : 'ran';
  };

  it('refuses a write on a read-only connection, runs it once writes are allowed, refuses it again once read-only', async () => {
    const create = 'CREATE TABLE IF NOT EXISTS t (x int)';
    expect(await run(create)).toMatch(/^STATEMENT_REFUSED/);
    expect(await run(create)).toMatch(/^STATEMENT_REFUSED/);
    await home.ok(['set', 'notes', '--allow-write']);
    expect(await run(create)).toBe('ran');
    expect(await run(create)).toBe('ran');
    await home.ok(['set', 'notes', '--read-only']);
    expect(await run(create)).toMatch(/^STATEMENT_REFUSED/);
  });

  it.skipIf(!postgres)('refuses code the agent adds once the connection declares context values, and not once it does not', async () => {
    // Rolled back: a connection's writes need no approval here, and nothing is left behind.
    const code = 'CREATE OR REPLACE FUNCTION pg_temp.hanactl_verdict_probe() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$';
    await home.ok(['set', 'pg', '--allow-write']);
    expect(await run(code, 'pg')).not.toMatch(/rule: context-code/);
    await home.ok(['set', 'pg', '--context', 'TENANT']);
    expect(await run(code, 'pg')).toMatch(/^STATEMENT_REFUSED: .*\(rule: context-code\)/);
    await home.ok(['set', 'pg', '--no-context']);
    expect(await run(code, 'pg')).not.toMatch(/rule: context-code/);
  });
});
