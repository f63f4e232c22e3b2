/**
 * Signed context values as a person switches them on: `hanactl set --signed-context`, the SQL of
 * `hanactl context-sql` run as the database owner, a policy on the verifying function, and the
 * agent's calls through the shim.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim } from '../helpers/mcp-client.js';
import { foreignRows, RlsFixture } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const st = statSync(path, { throwIfNoEntry: false });
    if (!st) return [];
    return st.isDirectory() ? files(path) : st.isFile() ? [path] : [];
  });
}

describe.skipIf(!available)('hanactl set --signed-context and context-sql, end to end', () => {
  const rls = new RlsFixture({ role: 'hctx_signed_e2e', table: 'signed_e2e_orders' });
  const schema = `hctx_e2e_${process.pid}_${randomBytes(3).toString('hex')}`;
  const home = new TestHome();
  let one: ShimHandle;

  beforeAll(async () => {
    await rls.setUp();
    await rls.addConnection(home, 'shop');
    await rls.admin.query(`DROP POLICY by_customer ON ${rls.table}`);
  });

  afterAll(async () => {
    await one?.close();
    await home.dispose();
    await rls.admin?.query(`DROP POLICY IF EXISTS by_signed ON ${rls.table}`).catch(() => {});
    await rls.admin?.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await rls.dispose();
  });

  it('context-sql refuses a connection that does not sign, naming the command that switches it on', async () => {
    const result = await home.run(['context-sql', 'shop']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${home.cli} set shop --signed-context`);
    expect(result.stdout).toBe('');
  });

  it('switches signing on, installs the function through psql-like piping, and the agent sees its own rows only', async () => {
    const set = await home.ok(['set', 'shop', '--signed-context']);
    expect(set.stdout).toContain('context values signed');
    expect(set.stderr).toContain(`${home.cli} context-sql shop |`);
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections[0]).toMatchObject({ name: 'shop', signedContext: true });

    const sql = await home.ok(['context-sql', 'shop', '--schema', schema]);
    expect(sql.stderr).toMatch(/holds the context signing key/);
    expect(sql.stdout).toContain(`CREATE OR REPLACE FUNCTION ${schema}.context(name text)`);
    expect(sql.stdout).toContain(`GRANT EXECUTE ON FUNCTION ${schema}.context(text) TO ${rls.role}`);
    await rls.admin.query(sql.stdout);
    await rls.admin.query(`CREATE POLICY by_signed ON ${rls.table} USING (customer_id = (SELECT ${schema}.context('customer_id'))::int)`);

    one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', 'shop']);
    const rows = await one.call('run_query', { sql: rls.select });
    expect(foreignRows(rows, 1, { rows: 5 })).toBe(0);

    // The key is in no file of the home in clear: not in the log, not beside the registry.
    const pad = /'\\x([0-9a-f]{128})'/.exec(sql.stdout)?.[1];
    expect(pad).toBeDefined();
    for (const file of files(home.dir)) expect(readFileSync(file).includes(pad as string), file).toBe(false);
  });

  it('switched off, values are no longer signed and the policy shows nothing', async () => {
    await home.ok(['set', 'shop', '--no-signed-context']);
    const rows = await one.call('run_query', { sql: rls.select });
    expect(rows.isError).toBeFalsy();
    expect((rows.structuredContent as { rows: unknown[] }).rows).toHaveLength(0);
    // On again: the same key, so the installed function still verifies.
    await home.ok(['set', 'shop', '--signed-context']);
    expect(foreignRows(await one.call('run_query', { sql: rls.select }), 1, { rows: 5 })).toBe(0);
  });

  it('is refused on an engine without it, naming the engine', async () => {
    await home.ok(['add', '--no-test', 'local', `sqlite:${join(home.dir, 'x.db')}`]);
    const result = await home.run(['set', 'local', '--signed-context']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/PostgreSQL connections only; "local" is sqlite/);
  });
});
