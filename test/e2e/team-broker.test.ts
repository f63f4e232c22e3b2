/**
 * The broker as a team service: two people sign in with one real OpenID provider, each uses only
 * the connections granted to them, and each sees only their own rows under row-level security on
 * PostgreSQL reached through PgBouncer in transaction pooling mode, with the context value taken
 * from their access token's claim rather than from the URL.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { connectHttp, freePort, type HttpClientHandle, rawRequest } from '../helpers/mcp-http.js';
import { startOidcProvider, type TestOidcClient, type TestOidcProvider } from '../helpers/oidc-provider.js';
import { PgBouncer, pgbouncerAvailable } from '../helpers/pgbouncer.js';
import { foreignRows, interleavedLeaks, RlsFixture } from '../helpers/rls-fixture.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

const available = (await serverAvailable('postgres')) && pgbouncerAvailable();

/** Alice is in the sales group and customer 1; Bob is customer 2; Carol's tokens carry no customer. */
const ALICE: TestOidcClient = { id: 'alice', secret: 'alice-secret-for-the-test-provider', claims: { customer_id: 1, groups: ['sales'] } };
const BOB: TestOidcClient = { id: 'bob', secret: 'bob-secret-for-the-test-provider', claims: { customer_id: '2' } };
const CAROL: TestOidcClient = { id: 'carol', secret: 'carol-secret-for-the-test-provider', claims: { groups: ['sales'] } };

describe.skipIf(!available)('a team broker: two signed-in people, grants, context values from claims, through PgBouncer', () => {
  const rls = new RlsFixture({ role: 'hctx_team', table: 'team_orders' });
  const home = new TestHome();
  let provider: TestOidcProvider;
  let bouncer: PgBouncer;
  let port: number;
  let base: string;
  let audience: string;
  const clients: HttpClientHandle[] = [];

  const open = async (path: string, who: TestOidcClient): Promise<HttpClientHandle> => {
    const client = await connectHttp(`${base}${path}`, await provider.token(audience, who), `team-${who.id}`);
    clients.push(client);
    return client;
  };
  const initialize = async (path: string, who: TestOidcClient) =>
    rawRequest(port, path, { host: `127.0.0.1:${port}`, authorization: `Bearer ${await provider.token(audience, who)}` });

  beforeAll(async () => {
    provider = await startOidcProvider([ALICE, BOB, CAROL]);
    await rls.setUp();
    bouncer = await PgBouncer.start({ users: { [rls.role]: rls.password }, poolSize: 2 });
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    audience = `${base}/mcp`;
    await home.ok([
      'daemon',
      'start',
      '--http',
      '--listen',
      `127.0.0.1:${port}`,
      '--oauth-issuer',
      provider.issuer,
      '--oauth-audience',
      audience,
    ]);
    await home.ok(['add', 'orders', bouncer.url(rls.role), '--password-stdin', '--context', 'customer_id'], { input: rls.password });
    const ledger = new Database(join(home.dir, 'ledger.db'));
    ledger.exec("CREATE TABLE entries (id INTEGER PRIMARY KEY, note TEXT NOT NULL); INSERT INTO entries VALUES (1, 'opening');");
    ledger.close();
    await home.ok(['add', '--no-test', 'ledger', `sqlite:${join(home.dir, 'ledger.db')}`]);
    const set = await home.ok(['set', 'orders', '--context-claim', 'CUSTOMER_ID=customer_id']);
    expect(set.stdout).toContain('context CUSTOMER_ID (for signed-in callers CUSTOMER_ID from the claim customer_id)');
    await home.ok(['grant', 'orders', 'sales']);
    await home.ok(['grant', 'orders', BOB.id]);
    await home.ok(['grant', 'ledger', BOB.id]);
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await home.dispose();
    await bouncer?.stop();
    await provider?.close();
    await rls.dispose();
  });

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
    expect(who).toEqual(new Set([`alice ${provider.issuer}`, `bob ${provider.issuer}`]));
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
