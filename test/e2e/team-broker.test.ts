/**
 * The broker as a team service: two people sign in with one real OpenID provider, each uses only
 * the connections granted to them, and each sees only their own rows under row-level security on
 * PostgreSQL reached through PgBouncer in transaction pooling mode, with the context value taken
 * from their access token's claim rather than from the URL.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { connectHttp, rawRequest } from '../helpers/mcp-http.js';
import type { TestOidcClient } from '../helpers/oidc-provider.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';
import { foreignRows, interleavedLeaks, RlsFixture } from '../helpers/rls-fixture.js';
import { ALICE, BOB, grantTeam, teamBroker } from '../helpers/team-broker.js';

const available = (await serverAvailable('postgres')) && pgbouncerAvailable();

/** Carol's tokens carry no customer (Alice is in the sales group and customer 1; Bob is customer 2). */
const CAROL: TestOidcClient = { id: 'carol', secret: 'carol-secret-for-the-test-provider', claims: { groups: ['sales'] } };

describe.skipIf(!available)('a team broker: two signed-in people, grants, context values from claims, through PgBouncer', () => {
  const rls = new RlsFixture({ role: 'hctx_team', table: 'team_orders' });
  const home = new TestHome();
  let bouncer: PgBouncer | undefined;
  const team = teamBroker(home, {
    people: [ALICE, BOB, CAROL],
    clientPrefix: 'team',
    async before() {
      await rls.setUp();
      bouncer = await PgBouncer.start({ users: { [rls.role]: rls.password }, poolSize: 2 });
    },
    // Each person runs 10 calls at once below (the leak check), above the default of 8.
    config: () => ({ perPerson: { maxConcurrentCalls: 10 } }),
    async after() {
      if (!bouncer) throw new Error('PgBouncer has not started');
      await home.ok(['add', 'orders', bouncer.url(rls.role), '--password-stdin', '--context', 'customer_id'], { input: rls.password });
      const set = await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=customer_id']);
      expect(set.stdout).toContain('context CUSTOMER_ID (for signed-in callers CUSTOMER_ID from the claim customer_id)');
      await grantTeam(home);
    },
    async dispose() {
      await bouncer?.stop();
      await rls.dispose();
    },
  });
  const { open, initialize } = team;

  it('shows each person only their own rows, the value coming from their token, while they share two server connections', async () => {
    const alice = await open('/mcp/orders', ALICE);
    const bob = await open('/mcp/orders', BOB);
    expect(foreignRows(await alice.call('run_query', { sql: rls.select }), 1, { rows: 5 })).toBe(0);
    expect(foreignRows(await bob.call('run_query', { sql: rls.select }), 2, { rows: 5 })).toBe(0);
    expect(await interleavedLeaks(alice, bob, rls.select, { rows: 5, batches: 5 })).toBe(0);
    const ro = await alice.call('run_query', { sql: "SELECT current_setting('transaction_read_only') AS ro" });
    expect(ro.structuredContent).toMatchObject({ rows: [{ ro: 'on' }] });
  });

  it('names the person behind each call in the audit trail: subject and issuer', async () => {
    const { records } = JSON.parse((await home.ok(['audit', '--connection', 'orders', '--limit', '1000', '--json'])).stdout);
    const who = new Set(records.map((r: { subject?: string; issuer?: string }) => `${r.subject} ${r.issuer}`));
    expect(who).toEqual(new Set([`alice ${team.provider.issuer}`, `bob ${team.provider.issuer}`]));
    const table = (await home.ok(['audit', '--connection', 'orders', '--limit', '2'])).stdout;
    expect(table).toMatch(/team-(alice|bob) 2\.0\.0 as (alice|bob)/);
  });

  it('gives each person only the connections granted to them (403 otherwise)', async () => {
    const refused = await initialize('/mcp/ledger', ALICE);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toMatch(/^You \(alice\) have no grant for the connection "ledger"/);
    const bob = await open('/mcp/ledger', BOB);
    const read = await bob.call('run_query', { sql: 'SELECT note FROM entries' });
    expect(read.structuredContent, textOf(read)).toMatchObject({ rows: [{ note: 'opening' }] });
  });

  it('refuses a value on the URL for a name that comes from the sign-in (403), even the caller’s own', async () => {
    for (const value of ['2', '1']) {
      const answer = await initialize(`/mcp/orders?CUSTOMER_ID=${value}`, ALICE);
      expect(answer.status).toBe(403);
      expect(JSON.parse(answer.body).error.message).toBe(
        'The context parameter CUSTOMER_ID of "orders" comes from your sign-in, not from the URL; remove CUSTOMER_ID=... from the endpoint\'s query string.',
      );
    }
    await expect(open('/mcp/orders?customer_id=2', ALICE)).rejects.toThrow(/comes from your sign-in/);
  });

  it('refuses a granted person whose token lacks the claim (403 naming the claim)', async () => {
    const answer = await initialize('/mcp/orders', CAROL);
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body).error.message).toBe(
      'Your access token (carol) has no "customer_id" claim, which gives the context parameter CUSTOMER_ID of "orders"; ask the identity provider\'s administrator to add it to your tokens.',
    );
  });

  it('binds a static token to the context values it was created with; its holder cannot give others on the URL', async () => {
    const created = await home.ok(['token', 'create', 'customer-3', '--connection', 'orders', '--context', 'customer_id=3']);
    expect(created.stderr).toContain(
      'Token "customer-3" created for the connection "orders" only, bound to its context values of CUSTOMER_ID.',
    );
    const bound = created.stdout.trim();
    const refused = await rawRequest(team.port, '/mcp/orders?CUSTOMER_ID=1', {
      host: `127.0.0.1:${team.port}`,
      authorization: `Bearer ${bound}`,
    });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.message).toBe(
      'The context parameter CUSTOMER_ID of "orders" comes from the token "customer-3", not from the URL; remove CUSTOMER_ID=... from the endpoint\'s query string.',
    );
    const client = team.keep(await connectHttp(`${team.base}/mcp/orders`, bound, 'bound-token'));
    expect(foreignRows(await client.call('run_query', { sql: rls.select }), 3, { rows: 5 })).toBe(0);
    const listed = JSON.parse((await home.ok(['token', 'list', '--json'])).stdout);
    expect(listed.tokens).toEqual([expect.objectContaining({ label: 'customer-3', connection: 'orders', context: ['CUSTOMER_ID'] })]);
    expect(JSON.stringify(listed)).not.toContain('"3"');

    const wrong = await home.run(['token', 'create', 'no-connection', '--context', 'CUSTOMER_ID=3']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('Context values belong to one connection: give --connection <name> with --context NAME=value.');
    const undeclared = await home.run(['token', 'create', 'region', '--connection', 'orders', '--context', 'REGION=eu']);
    expect(undeclared.stderr).toContain('"orders" has no context parameter REGION (it declares CUSTOMER_ID).');

    // A token created without values leaves them to the URL, as before.
    const free = (await home.ok(['token', 'create', 'free', '--connection', 'orders'])).stdout.trim();
    const freeClient = team.keep(await connectHttp(`${team.base}/mcp/orders?CUSTOMER_ID=2`, free, 'free-token'));
    expect(foreignRows(await freeClient.call('run_query', { sql: rls.select }), 2, { rows: 5 })).toBe(0);
  });

  it('refuses a claim for an undeclared name, and lets a person remove a claim mapping', async () => {
    const wrong = await home.run(['set', 'orders', '--context-claim', 'REGION=region']);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain('"orders" has no context parameter REGION (it declares CUSTOMER_ID)');
    const listed = JSON.parse((await home.ok(['list', '--json'])).stdout);
    const orders = (listed.connections ?? listed).find((c: { name: string }) => c.name === 'orders');
    expect(orders.contextClaims).toEqual({ CUSTOMER_ID: 'customer_id' });

    await home.ok(['set', 'orders', '--remove-context-claim', 'CUSTOMER_ID']);
    // Without the mapping the value is the URL's again, as for any caller.
    const answer = await initialize('/mcp/orders', CAROL);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.message).toMatch(/CUSTOMER_ID/);
    const carol = await open('/mcp/orders?CUSTOMER_ID=3', CAROL);
    expect(foreignRows(await carol.call('run_query', { sql: rls.select }), 3, { rows: 5 })).toBe(0);
    await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=customer_id']);
    await expect(open('/mcp/orders?CUSTOMER_ID=3', CAROL)).rejects.toThrow(/has no \\"customer_id\\" claim/);
  });
});

describe.skipIf(!available)('per-person limits on a team broker (config.json perPerson)', () => {
  const home = new TestHome();
  const table = `team_locked_${process.pid}_${randomBytes(3).toString('hex')}`;
  let admin: pg.Client;
  const team = teamBroker(home, {
    people: [ALICE, BOB],
    clientPrefix: 'limits',
    async before() {
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`CREATE TABLE ${table} (id int)`);
    },
    config: () => ({ perPerson: { maxSessions: 2, maxConcurrentCalls: 1 } }),
    async after() {
      await home.ok(['add', 'orders', PG_URL, '--no-password']);
      await home.ok(['grant', 'orders', '*']);
    },
    async dispose() {
      await admin?.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await admin?.end();
    },
  });
  const open = (who: TestOidcClient) => team.open('/mcp/orders', who);

  it('refuses a person’s call beyond their running-call limit with 429, while another person’s call runs', async () => {
    const [alice, aliceToo, bob] = [await open(ALICE), await open(ALICE), await open(BOB)];
    // The person's first call waits on a lock the test holds, so it is surely running.
    // (Another session holds it: the activity view is a snapshot for the length of a transaction.)
    const locker = new pg.Client({ connectionString: PG_URL });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    let held: Promise<CallToolResult> | undefined;
    try {
      held = alice.call('run_query', { sql: `SELECT count(*) AS n FROM ${table}` });
      held.catch(() => {});
      const waiting = async () =>
        (await admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%${table}%'`))
          .rows[0].n;
      while ((await waiting()) === 0);
      await expect(aliceToo.call('run_query', { sql: 'SELECT 1 AS one' })).rejects.toMatchObject({
        code: 429,
        message: expect.stringContaining(
          'You (alice) already have 1 calls running, the limit per person; wait for one to finish, then retry.',
        ),
      });
      expect((await bob.call('run_query', { sql: 'SELECT 1 AS one' })).structuredContent).toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await locker.query('COMMIT');
      await locker.end();
    }
    expect((await held).structuredContent).toMatchObject({ rows: [{ n: 0 }] });
    expect((await aliceToo.call('run_query', { sql: 'SELECT 1 AS one' })).structuredContent).toMatchObject({ rows: [{ one: 1 }] });
  });

  it('refuses a person’s session beyond their session limit with 429, while another person opens one', async () => {
    const answer = await team.initialize('/mcp/orders', ALICE);
    expect(answer.status).toBe(429);
    expect(answer.headers['retry-after']).toBe('60');
    expect(JSON.parse(answer.body).error.message).toBe(
      'You (alice) already hold 2 MCP sessions, the limit per person (2); close one (DELETE) or wait for idle ones to expire.',
    );
    const bob = await open(BOB);
    expect((await bob.call('run_query', { sql: 'SELECT 2 AS two' })).structuredContent).toMatchObject({ rows: [{ two: 2 }] });
  });
});
