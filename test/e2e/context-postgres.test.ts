import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const suffix = `${process.pid}_${randomBytes(3).toString('hex')}`;
const role = `hanactl_rls_${suffix}`;
const table = `rls_orders_${suffix}`;
const password = randomBytes(12).toString('hex');

type Row = { customer_id: number; item: string };

describe.skipIf(!available)('context parameters scope PostgreSQL row-level security per caller', () => {
  const home = new TestHome();
  let admin: pg.Client;
  let one: ShimHandle;
  let two: ShimHandle;

  const ownRowsOnly = (result: Awaited<ReturnType<ShimHandle['call']>>, customer: number) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    const rows = (result.structuredContent as { rows: Row[] }).rows;
    expect(rows.length).toBeGreaterThan(0);
    return rows.filter((r) => r.customer_id !== customer).length;
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE TABLE ${table} (customer_id int NOT NULL, item text NOT NULL)`);
    await admin.query(`INSERT INTO ${table} SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g`);
    await admin.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
    await admin.query(`CREATE POLICY by_customer ON ${table} USING (customer_id = nullif(current_setting('mcp.customer_id', true), '')::int)`);
    await admin.query(`GRANT SELECT ON ${table} TO ${role}`);
    const u = new URL(PG_URL);
    await home.ok(['add', 'shop', `postgres://${role}@${u.host}${u.pathname}`, '--password-stdin', '--context', 'customer_id'], { input: password });
    one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1', MCP_CONTEXT_UNRELATED: 'ignored' }, ['--connection', 'shop']);
    two = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '2' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await home.dispose();
    await admin?.query(`DROP TABLE IF EXISTS ${table}`);
    await admin?.query(`DROP ROLE IF EXISTS ${role}`);
    await admin?.end();
  });

  const select = `SELECT customer_id, item FROM ${table}`;

  it('shows the declared names in hanactl list and current_connection', async () => {
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections[0].context).toEqual(['CUSTOMER_ID']);
    expect(textOf(await one.call('current_connection'))).toMatch(/context parameters: CUSTOMER_ID/);
  });

  it('500 interleaved concurrent calls on one pool: each caller sees only its own rows', async () => {
    let leaks = 0;
    for (let batch = 0; batch < 25; batch++) {
      const calls: [ShimHandle, number][] = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? [one, 1] : [two, 2]));
      const results = await Promise.all(calls.map(([shim]) => shim.call('run_query', { sql: select })));
      results.forEach((r, i) => {
        leaks += ownRowsOnly(r, calls[i]?.[1] ?? 0);
      });
    }
    expect(leaks).toBe(0);
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout);
    expect(pools).toHaveLength(1);
  });

  it('stays isolated after faults on the previous borrower: error, cancel, killed connection, overwrite attempt', async () => {
    expect((await one.call('run_query', { sql: 'SELECT 1/0' })).isError).toBe(true);
    // A cancelled call: the client gives up while the statement runs.
    const abort = new AbortController();
    const cancelled = one.client.callTool({ name: 'run_query', arguments: { sql: 'SELECT count(*) FROM generate_series(1, 50000000)' } }, undefined, { signal: abort.signal }).catch((e) => e);
    setTimeout(() => abort.abort(), 300);
    await cancelled;
    // The agent tries to overwrite its own value, session-wide.
    await one.call('run_query', { sql: "SELECT set_config('mcp.customer_id', '2', false)" });
    // Every pooled connection killed under the daemon.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [role]);
    let leaks = 0;
    for (let batch = 0; batch < 10; batch++) {
      const [a, b] = await Promise.all([one.call('run_query', { sql: select }), two.call('run_query', { sql: select })]);
      if (a.isError || b.isError) continue; // the first call after the kill may fail; the next succeeds
      leaks += ownRowsOnly(a, 1) + ownRowsOnly(b, 2);
    }
    expect(leaks).toBe(0);
    const after = await one.call('run_query', { sql: select });
    expect(ownRowsOnly(after, 1)).toBe(0);
  });

  it('refuses a call whose declared parameter has no value, naming it; nothing runs', async () => {
    const none = await startShim(home.env, ['--connection', 'shop']);
    try {
      const result = await none.call('run_query', { sql: select });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/CUSTOMER_ID is declared for this connection but has no value; set MCP_CONTEXT_CUSTOMER_ID/);
    } finally {
      await none.close();
    }
  });

  it.each([
    ['empty', '   ', /CUSTOMER_ID is empty/],
    ['over the byte limit', 'é'.repeat(2049), /CUSTOMER_ID is 4098 bytes long; the limit on this engine is 4096 bytes/],
  ])('refuses an %s value, naming the parameter', async (_what, value, message) => {
    const shim = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: value }, ['--connection', 'shop']);
    try {
      const result = await shim.call('run_query', { sql: select });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(message);
    } finally {
      await shim.close();
    }
  });
});

describe('declaring context parameters (hanactl add/set)', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it.each([
    ['a repeat after normalising', 'customer_id,CUSTOMER_ID', /"CUSTOMER_ID" is declared twice/],
    ['a name starting with a digit', '1ST', /must start with a letter/],
    ['a name with a dash', 'CUSTOMER-ID', /must start with a letter and hold only letters, digits and _/],
    ['a name over 30 characters', 'A'.repeat(31), /longer than 30 characters/],
    ['a name HANA reserves', 'APPLICATIONUSER', /reserves/],
  ])('refuses %s', async (_what, names, message) => {
    const result = await home.run(['add', 'x', 'sqlite::memory:', '--context', names]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('normalises names (trimmed, upper-cased) and changes them with hanactl set', async () => {
    await home.ok(['add', 'ctx', 'sqlite::memory:', '--context', ' customer_id , region']);
    let info = JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0];
    expect(info.context).toEqual(['CUSTOMER_ID', 'REGION']);
    await home.ok(['set', 'ctx', '--context', 'tenant']);
    info = JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0];
    expect(info.context).toEqual(['TENANT']);
    await home.ok(['set', 'ctx', '--allow-write']);
    expect(JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0]).toMatchObject({ allowWrite: true, context: ['TENANT'] });
    await home.ok(['set', 'ctx', '--no-context', '--read-only']);
    expect(JSON.parse((await home.ok(['list', '--json'])).stdout).connections[0]).toMatchObject({ allowWrite: false, context: [] });
  });
});
