/**
 * `/mcp` on a team broker, the URL naming no connection: each signed-in person lists and uses
 * only the connections granted to them, with the context value of a connection that maps it
 * coming from their access token, and sees only their own rows under row-level security. A
 * static token on `/mcp` gets the answer it always got.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { createToken, rawRequest } from '../helpers/mcp-http.js';
import type { TestOidcClient } from '../helpers/oidc-provider.js';
import { foreignRows, RlsFixture } from '../helpers/rls-fixture.js';
import { ALICE, BOB, grantTeam, teamBroker } from '../helpers/team-broker.js';

const available = await serverAvailable('postgres');

/** Dave has no grant at all (Alice is in the sales group and customer 1; Bob is customer 2). */
const DAVE: TestOidcClient = { id: 'dave', secret: 'dave-secret-for-the-test-provider', claims: { customer_id: 3 } };

function listed(result: CallToolResult): string[] {
  const { connections } = result.structuredContent as { connections: { name: string }[] };
  return connections.map((c) => c.name).sort();
}

describe.skipIf(!available)('/mcp on a team broker: signed-in callers choose among their granted connections', () => {
  const rls = new RlsFixture({ role: 'hctx_shared', table: 'shared_orders' });
  const home = new TestHome();
  const team = teamBroker(home, {
    people: [ALICE, BOB, DAVE],
    clientPrefix: 'shared',
    before: () => rls.setUp(),
    async after() {
      await rls.addConnection(home, 'orders');
      await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=customer_id']);
      await grantTeam(home);
    },
    dispose: () => rls.dispose(),
  });
  const { open } = team;
  const refusal = (name: string, who: string) =>
    new RegExp(
      `You \\(${who}\\) have no grant for the connection "${name}"; a person gives one with \`[^\`]*hanactl[^\`]* grant ${name} ${who}\`\\.`,
    );

  it('lists to each person only their granted connections; each uses one and sees only their own rows', async () => {
    const alice = await open('/mcp', ALICE);
    const bob = await open('/mcp', BOB);
    expect(listed(await alice.call('list_connections'))).toEqual(['orders']);
    expect(listed(await bob.call('list_connections'))).toEqual(['ledger', 'orders']);

    const used = await alice.call('use_connection', { name: 'orders' });
    expect(used.isError, textOf(used)).toBeFalsy();
    expect(foreignRows(await alice.call('run_query', { sql: rls.select }), 1, { rows: 5 })).toBe(0);
    expect(foreignRows(await bob.call('run_query', { sql: rls.select, connection: 'orders' }), 2, { rows: 5 })).toBe(0);
    const read = await bob.call('run_query', { sql: 'SELECT note FROM entries', connection: 'ledger' });
    expect(read.structuredContent, textOf(read)).toMatchObject({ rows: [{ note: 'opening' }] });
  });

  it('refuses an ungranted connection by use_connection, by a call’s connection, and as a resource, naming the grant', async () => {
    const alice = await open('/mcp', ALICE);
    const used = await alice.call('use_connection', { name: 'ledger' });
    expect(used.isError).toBe(true);
    expect(textOf(used)).toMatch(refusal('ledger', 'alice'));
    const queried = await alice.call('run_query', { sql: 'SELECT note FROM entries', connection: 'ledger' });
    expect(queried.isError).toBe(true);
    expect(textOf(queried)).toMatch(refusal('ledger', 'alice'));
    await expect(alice.client.readResource({ uri: 'hanactl://ledger/main/entries' })).rejects.toThrow(refusal('ledger', 'alice'));
  });

  it('gives a caller without any grant a session that lists nothing and uses nothing', async () => {
    const dave = await open('/mcp', DAVE);
    expect(listed(await dave.call('list_connections'))).toEqual([]);
    const queried = await dave.call('run_query', { sql: rls.select, connection: 'orders' });
    expect(queried.isError).toBe(true);
    expect(textOf(queried)).toMatch(refusal('orders', 'dave'));
  });

  it('refuses a URL value for a name a granted connection takes from the sign-in (403)', async () => {
    const answer = await team.initialize('/mcp?CUSTOMER_ID=2', ALICE);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toBe(
      'The context parameter CUSTOMER_ID of "orders" comes from your sign-in, not from the URL; remove CUSTOMER_ID=... from the endpoint\'s query string.',
    );
  });

  it('answers a static token on /mcp as before: no such endpoint (404), and 401 without a token', async () => {
    const token = await createToken(home, 'laptop');
    const answer = await rawRequest(team.port, '/mcp', { host: `127.0.0.1:${team.port}`, authorization: `Bearer ${token}` });
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.message).toBe('No such endpoint: /mcp. MCP over HTTP is served at /mcp/<connection>.');
    expect((await rawRequest(team.port, '/mcp', { host: `127.0.0.1:${team.port}` })).status).toBe(401);
  });

  it('fixes the claims a session read: after a person maps another claim, the open session is refused (400)', async () => {
    const alice = await open('/mcp', ALICE);
    expect(listed(await alice.call('list_connections'))).toEqual(['orders']);
    await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=sub']);
    try {
      await expect(alice.call('list_connections')).rejects.toThrow(/opened on \/mcp with other context values/);
    } finally {
      await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=customer_id']);
    }
  });
});
