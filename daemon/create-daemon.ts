import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Config } from '../shared/config.js';
import type { Paths } from '../shared/paths.js';
import { hanactlVersion } from '../shared/version.js';
import { ApprovalDesk } from './approvals/approval-desk.js';
import type { AuditLog } from './audit/audit-log.js';
import { openAudit } from './audit/open-audit.js';
import { DEFAULT_AUDIT_DAYS } from './audit/retention.js';
import { CatalogService } from './catalog/index.js';
import { CuratedService } from './curated/curated-service.js';
import { loadDriverFactory } from './engines/index.js';
import { GrantService } from './grants/index.js';
import { createApp } from './http/app.js';
import { KeyService } from './keys/key-service.js';
import { keySlots } from './keys/key-slots.js';
import { openRegistry } from './keys/open-registry.js';
import { RelaySessions } from './mcp/relay-sessions.js';
import { ServiceBroker } from './mcp/service-broker.js';
import { defaultMaxCallsPerSession } from './mcp/session-calls.js';
import { SessionStore } from './mcp/session-store.js';
import type { HttpListenAddress } from './mcp-http/listen-address.js';
import type { RunningMcpHttp } from './mcp-http/mcp-http.js';
import type { OAuthSettings } from './mcp-http/oauth-verifier.js';
import { checkRead, createStatementPolicy, loadStatementPolicy } from './policy-wiring.js';
import { DEFAULT_POOL_OPTIONS } from './pools/pool.js';
import { PoolManager, type PoolManagerOptions } from './pools/pool-manager.js';
import { createConnectionResolver } from './projects/connection-resolver.js';
import { ProjectFiles } from './projects/project-files.js';
import { ProjectService } from './projects/project-service.js';
import { SessionSources } from './projects/session-sources.js';
import { TrustStore } from './projects/trust-store.js';
import { CallTracker } from './queries/call-tracker.js';
import { QueryService, type QueryServiceDeps, type StatementPolicy } from './queries/query-service.js';
import { type ConnectionRecord, sameLogin } from './registry/connection-record.js';
import { ConnectionService } from './registry/connection-service.js';
import type { Registry } from './registry/registry.js';
import { SessionTable } from './sessions/session-table.js';
import { TokenService } from './tokens/index.js';

/** What the process serving the graph tells it; without a host the graph serves no one (tests). */
export interface DaemonHost {
  /** Runs before every request and relay session; throws to refuse it (the socket folder check). */
  guard?(): void;
  /** A client asked the daemon to stop (`/v1/shutdown`). */
  shutdown?(): void;
  /** True once the daemon is stopping: new work is refused. */
  stopping?(): boolean;
  /** The socket the daemon listens on, for the health answer. */
  readonly socket?: string;
}

export interface DaemonConfig {
  readonly paths: Paths;
  /** Where the key store is chosen from (`HANACTL_REGISTRY_KEY`). */
  readonly env: NodeJS.ProcessEnv;
  /** The person's settings (config.json). */
  readonly settings: Config;
  /** Opt into the key file for this start. */
  readonly keyFile?: boolean;
  readonly log: Logger;
  readonly host?: DaemonHost;
  /** Where hana-cli keeps its connections (default `~/.hana-cli`). */
  readonly hanaCliHome?: string;
  /** Pools beyond this many are closed, least recently used first (default 32). */
  readonly maxPools?: number;
  /** Only for tests that put a recorded engine client behind the real pools; the daemon loads the engine table's drivers. */
  readonly loadDriverFactory?: PoolManagerOptions['loadDriverFactory'];
}

/** The daemon's whole object graph, built and not serving: `runDaemon` listens, tests call `app.request`. */
export interface Daemon {
  /** The daemon API under /v1, every route mounted. */
  readonly app: Hono;
  /** The relays' MCP sessions, served over the socket by `dispatchConnections`. */
  readonly relays: RelaySessions;
  readonly registry: Registry;
  readonly pools: PoolManager;
  readonly connections: ConnectionService;
  readonly projects: ProjectService;
  readonly trust: TrustStore;
  readonly queries: QueryService;
  readonly catalog: CatalogService;
  readonly curated: CuratedService;
  readonly sessions: SessionTable;
  readonly calls: CallTracker;
  readonly approvals: ApprovalDesk;
  readonly audit: AuditLog;
  readonly tokens: TokenService;
  readonly grants: GrantService;
  readonly keys: KeyService;
  /** Where the registry key comes from (`env`, `file`, `keychain`). */
  readonly keySource: string;
  /** Serves MCP over HTTP on `address` with the same tools; the health answer names its URL from then on. */
  serveMcpHttp(
    address: HttpListenAddress,
    options?: { oauth?: OAuthSettings; tls?: { cert: string; key: string } },
  ): Promise<RunningMcpHttp>;
  /** Loads what is deferred so that a daemon listens sooner: the MCP server side, then the statement policy (rejects if it cannot load). */
  warm(): Promise<void>;
  /** Closes the pools, then the audit trail (so calls ended by the closing are recorded), then the registry. */
  close(): Promise<void>;
}

/**
 * The composition root: builds every collaborator of the daemon (key store, registry, audit,
 * pools, services, approvals, the API with all its routes, relay sessions, MCP over HTTP) and
 * listens on nothing. Nothing else in the daemon constructs collaborators.
 */
export async function createDaemon(config: DaemonConfig): Promise<Daemon> {
  const { paths, settings, log, host = {} } = config;
  const closing: (() => void | Promise<void>)[] = [];
  const close = async () => {
    for (const step of closing.splice(0).reverse()) await Promise.resolve(step()).catch(() => {});
  };
  try {
    // The key store and its "next" slot; an interrupted key rotation or import is finished here.
    const slots = keySlots(paths, config.env, config.keyFile === true || settings.keyFile === true);
    const registry = await openRegistry(slots, paths.registry, log);
    closing.push(() => registry.close());
    const keys = new KeyService({ slots, registry, registryPath: paths.registry, hanactlVersion: hanactlVersion(), log });
    const audit = openAudit(paths.audit, settings.auditDays ?? DEFAULT_AUDIT_DAYS, log, registry.auditKey());
    closing.push(() => audit.close());
    const pools = new PoolManager({
      pool: { ...DEFAULT_POOL_OPTIONS, ...settings.pool },
      chosenPool: settings.pool ?? {},
      connectTimeoutMs: settings.connectTimeoutMs ?? 10_000,
      maxPools: config.maxPools ?? 32,
      loadDriverFactory: config.loadDriverFactory ?? loadDriverFactory,
    });
    closing.push(() => pools.closeAll());

    const connections = new ConnectionService(registry, pools);
    const trust = new TrustStore(registry);
    const projects = new ProjectService({
      trust,
      files: new ProjectFiles(trust),
      hanaCliHome: config.hanaCliHome ?? join(homedir(), '.hana-cli'),
      sessions: new SessionSources(),
      onReplaced: (previous) => void pools.forget(previous),
    });
    const resolve = createConnectionResolver(connections, projects);
    const poolFor: QueryServiceDeps['poolFor'] = (record) => pools.poolFor(record);
    const calls = new CallTracker({ audit: audit.log });
    // Writes on `--approve-writes` connections wait here; the tracker lists them and audits the decision.
    const approvals = new ApprovalDesk(calls);
    const policy: StatementPolicy = createStatementPolicy();
    const sameLoginAs = (record: ConnectionRecord): ConnectionRecord[] =>
      connections.list().filter((other) => other.name !== record.name && sameLogin(other.target, record.target));
    const queries = new QueryService({ resolve, poolFor, policy, approvals, sameLoginAs });
    const catalog = new CatalogService({ queries, validate: checkRead });
    const curated = new CuratedService({ registry, connections, policy });
    const sessions = new SessionTable();
    const tokens = new TokenService(registry, {
      assertConnection: (name) => void connections.resolve(name),
      contextNames: (name) => connections.resolve(name).context,
    });
    const grants = new GrantService(registry, { assertConnection: (name) => void connections.resolve(name) });

    let mcpHttpUrl: string | undefined;
    const startedAt = Date.now();
    const app = createApp({
      health: () => ({
        name: 'hanactl',
        version: hanactlVersion(),
        pid: process.pid,
        uptimeMs: Date.now() - startedAt,
        keySource: slots.current.source,
        socket: host.socket ?? paths.socket,
        home: paths.home,
        node: process.version,
        ...(mcpHttpUrl ? { mcpHttp: mcpHttpUrl } : {}),
      }),
      connections,
      queries,
      catalog,
      curated,
      tokens,
      grants,
      sessions,
      pools,
      calls,
      approvals,
      audit: audit.log,
      projects,
      trust,
      keys,
      ...(host.guard ? { guard: host.guard } : {}),
      shutdown: () => host.shutdown?.(),
      ...(host.stopping ? { stopping: host.stopping } : {}),
      onClientGone: (path) => log.info({ path }, 'client closed its connection mid-request'),
      onError: (err, path) => log.error({ path, err: err instanceof Error ? err.message : String(err) }, 'unexpected error'),
    });

    // The tools call the services directly, for relay sessions and MCP over HTTP alike.
    let loading: Promise<typeof import('../shim/server.js')> | undefined;
    const shimServer = () => (loading ??= import('../shim/server.js'));
    const services = { connections, projects, queries, catalog, sessions, calls, curated };
    const maxCallsPerSession =
      settings.perSession?.maxConcurrentCalls ?? defaultMaxCallsPerSession(settings.pool?.max ?? DEFAULT_POOL_OPTIONS.max);
    const sessionStore = new SessionStore(join(paths.runDir, 'sessions'));
    sessionStore.prune(24 * 60 * 60_000);
    const relays = new RelaySessions({
      services,
      // The SDK's server side loads after the socket listens, so a restart answers relays sooner.
      createServer: async (broker, options) => (await shimServer()).createShimServer(broker, options),
      store: sessionStore,
      ...(host.guard ? { guard: host.guard } : {}),
      maxCallsPerSession,
      onError: (err) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'MCP session error'),
    });

    const serveMcpHttp: Daemon['serveMcpHttp'] = async (address, { oauth, tls } = {}) => {
      const [{ startMcpHttp }, { createShimServer }] = await Promise.all([import('./mcp-http/mcp-http.js'), shimServer()]);
      const running = await startMcpHttp({
        address,
        tokens,
        ...(oauth ? { oauth, grants } : {}),
        ...(tls ? { tls } : {}),
        broker: new ServiceBroker(services),
        brokerFor: (person) => new ServiceBroker(services, { person }),
        ...(settings.perPerson?.maxSessions ? { sessions: { maxSessionsPerPerson: settings.perPerson.maxSessions } } : {}),
        ...(settings.perPerson?.maxConcurrentCalls ? { maxCallsPerPerson: settings.perPerson.maxConcurrentCalls } : {}),
        maxCallsPerSession,
        createServer: (broker, { connection, context }) =>
          createShimServer(broker, { ...(connection !== null ? { connection, context } : {}), transport: 'http' }),
        onError: (err, path) => log.error({ path, err: err instanceof Error ? err.message : String(err) }, 'unexpected error'),
      });
      mcpHttpUrl = running.url;
      return running;
    };

    return {
      app,
      relays,
      registry,
      pools,
      connections,
      projects,
      trust,
      queries,
      catalog,
      curated,
      sessions,
      calls,
      approvals,
      audit: audit.log,
      tokens,
      grants,
      keys,
      keySource: slots.current.source,
      serveMcpHttp,
      warm: async () => {
        const policyLoaded = loadStatementPolicy();
        void shimServer();
        await policyLoaded;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
