import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { foreignRows, interleavedLeaks, leaksAfterFault, RlsFixture } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');
const rls = new RlsFixture({ role: 'hanactl_rls', table: 'rls_orders' });
const { select } = rls;

describe.skipIf(!available)('context parameters scope PostgreSQL row-level security per caller', () => {
  const home = new TestHome();
  let one: ShimHandle;
  let two: ShimHandle;

  beforeAll(async () => {
    await rls.setUp();
    await rls.addConnection(home, 'shop');
    one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1', MCP_CONTEXT_UNRELATED: 'ignored' }, ['--connection', 'shop']);
    two = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '2' }, ['--connection', 'shop']);
  });

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await home.dispose();
    await rls.dispose();
  });

  it('shows the declared names in hanactl list and current_connection', async () => {
    const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
    expect(connections[0].context).toEqual(['CUSTOMER_ID']);
    expect(textOf(await one.call('current_connection'))).toMatch(/context parameters: CUSTOMER_ID/);
  });

  it('500 interleaved concurrent calls on one pool: each caller sees only its own rows', async () => {
    expect(await interleavedLeaks(one, two, select)).toBe(0);
    const { pools } = JSON.parse((await home.ok(['pools', '--json'])).stdout);
    expect(pools).toHaveLength(1);
  });

  it('stays isolated after faults on the previous borrower: error, cancel, killed connection, overwrite attempt', async () => {
    expect((await one.call('run_query', { sql: 'SELECT 1/0' })).isError).toBe(true);
    // A cancelled call: the client gives up while the statement runs.
    const abort = new AbortController();
    const cancelled = one.client
      .callTool({ name: 'run_query', arguments: { sql: 'SELECT count(*) FROM generate_series(1, 50000000)' } }, undefined, {
        signal: abort.signal,
      })
      .catch((e) => e);
    setTimeout(() => abort.abort(), 300);
    await cancelled;
    // The agent tries to overwrite its own value, session-wide.
    await one.call('run_query', { sql: "SELECT set_config('mcp.customer_id', '2', false)" });
    // Every pooled connection killed under the daemon.
    await rls.killSessions();
    expect(await leaksAfterFault(one, two, select)).toBe(0);
    const after = await one.call('run_query', { sql: select });
    expect(foreignRows(after, 1)).toBe(0);
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
    const result = await home.run(['add', '--no-test', 'x', 'sqlite::memory:', '--context', names]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('normalises names (trimmed, upper-cased) and changes them with hanactl set', async () => {
    await home.ok(['add', '--no-test', 'ctx', 'sqlite::memory:', '--context', ' customer_id , region']);
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
