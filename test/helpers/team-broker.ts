/**
 * A team broker for the suite around the call (`test/e2e/team-broker.test.ts`,
 * `test/e2e/team-broker-shared-endpoint.test.ts`): a test OpenID provider of the people who sign
 * in, the daemon serving MCP over HTTP as its resource server, and the clients a test opens as
 * those people, closed after the suite.
 */
import { afterAll, beforeAll } from 'vitest';
import type { TestHome } from './hanactl-home.js';
import { connectHttp, type HttpClientHandle, rawRequest } from './mcp-http.js';
import { addLedger, type OAuthDaemon, startOAuthDaemon } from './oauth-daemon.js';
import { startOidcProvider, type TestOidcClient, type TestOidcProvider } from './oidc-provider.js';

/** Alice is in the sales group and customer 1. */
export const ALICE: TestOidcClient = {
  id: 'alice',
  secret: 'alice-secret-for-the-test-provider',
  claims: { customer_id: 1, groups: ['sales'] },
};
/** Bob is customer 2 (the claim a string). */
export const BOB: TestOidcClient = { id: 'bob', secret: 'bob-secret-for-the-test-provider', claims: { customer_id: '2' } };

export interface TeamBroker extends OAuthDaemon {
  /** The provider the people sign in with (once the suite's set-up ran). */
  readonly provider: TestOidcProvider;
  /** An MCP over HTTP client of `path` signed in as `who` (client name `<clientPrefix>-<id>`), closed after the suite. */
  open(path: string, who: TestOidcClient): Promise<HttpClientHandle>;
  /** Closes `client` after the suite. */
  keep(client: HttpClientHandle): HttpClientHandle;
  /** A raw initialize of `path` with `who`'s access token. */
  initialize(path: string, who: TestOidcClient): ReturnType<typeof rawRequest>;
}

export interface TeamBrokerOptions {
  /** Who may sign in. */
  readonly people: readonly TestOidcClient[];
  /** The start of each client's name. */
  readonly clientPrefix: string;
  /** Runs once the provider answers, before the daemon starts. */
  readonly before?: () => Promise<void>;
  /** The daemon's config.json, written before it starts. */
  readonly config?: (audience: string) => Record<string, unknown>;
  /** Runs once the daemon answers: connections and grants. */
  readonly after?: () => Promise<void>;
  /** Runs last after the suite, once the clients, the home and the provider are gone. */
  readonly dispose?: () => Promise<void>;
}

/** Sets the broker up in `home` before the suite around the call; after it, closes the clients and disposes `home`. */
export function teamBroker(home: TestHome, { people, clientPrefix, before, config, after, dispose }: TeamBrokerOptions): TeamBroker {
  let provider: TestOidcProvider | undefined;
  let daemon: OAuthDaemon | undefined;
  const clients: HttpClientHandle[] = [];

  beforeAll(async () => {
    provider = await startOidcProvider(people);
    await before?.();
    daemon = await startOAuthDaemon(home, provider.issuer, config);
    await after?.();
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await home.dispose();
    await provider?.close();
    await dispose?.();
  });

  const started = (): { provider: TestOidcProvider; daemon: OAuthDaemon } => {
    if (!provider || !daemon) throw new Error('the team broker has not started');
    return { provider, daemon };
  };
  const keep = (client: HttpClientHandle): HttpClientHandle => {
    clients.push(client);
    return client;
  };
  return {
    get provider() {
      return started().provider;
    },
    get port() {
      return started().daemon.port;
    },
    get base() {
      return started().daemon.base;
    },
    get audience() {
      return started().daemon.audience;
    },
    keep,
    async open(path, who) {
      const { provider, daemon } = started();
      return keep(await connectHttp(`${daemon.base}${path}`, await provider.token(daemon.audience, who), `${clientPrefix}-${who.id}`));
    },
    async initialize(path, who) {
      const { provider, daemon } = started();
      const authorization = `Bearer ${await provider.token(daemon.audience, who)}`;
      return rawRequest(daemon.port, path, { host: `127.0.0.1:${daemon.port}`, authorization });
    },
  };
}

/** Adds the `ledger` connection and grants `orders` to the sales group and Bob, `ledger` to Bob alone. */
export async function grantTeam(home: TestHome): Promise<void> {
  await addLedger(home);
  await home.ok(['grant', 'orders', 'sales']);
  await home.ok(['grant', 'orders', BOB.id]);
  await home.ok(['grant', 'ledger', BOB.id]);
}
