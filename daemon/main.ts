import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import pino from 'pino';
import { readConfig } from '../shared/config.js';
import { DAEMON_KEEP_ALIVE_MS } from '../shared/daemon-client.js';
import { HanactlError } from '../shared/errors.js';
import { type Paths, resolvePaths } from '../shared/paths.js';
import { clearStopped } from '../shared/stopped-marker.js';
import { hanactlVersion } from '../shared/version.js';
import { ApprovalDesk } from './approvals/approval-desk.js';
import { openAudit } from './audit/open-audit.js';
import { DEFAULT_AUDIT_DAYS } from './audit/retention.js';
import { CatalogService, leasedWriteScope } from './catalog/index.js';
import { CuratedService } from './curated/curated-service.js';
import { loadDriverFactory } from './engines/index.js';
import { GrantService } from './grants/index.js';
import { createApp } from './http/app.js';
import { catalogRoutes } from './http/catalog-routes.js';
import { curatedRoutes } from './http/curated-routes.js';
import { grantRoutes } from './http/grant-routes.js';
import { tokenRoutes } from './http/token-routes.js';
import { KeyService } from './keys/key-service.js';
import { keySlots } from './keys/key-slots.js';
import { openRegistry } from './keys/open-registry.js';
import { AlreadyRunningError, type DaemonLock, takeDaemonLock } from './lifecycle/daemon-lock.js';
import { privateRunDirGuard } from './lifecycle/run-dir.js';
import { RelaySessions } from './mcp/relay-sessions.js';
import { ServiceBroker } from './mcp/service-broker.js';
import { defaultMaxCallsPerSession } from './mcp/session-calls.js';
import { SessionStore } from './mcp/session-store.js';
import { dispatchConnections } from './mcp/socket-dispatch.js';
import { resolveListenAddress } from './mcp-http/listen-address.js';
import type { RunningMcpHttp } from './mcp-http/mcp-http.js';
import { checkRead, createStatementPolicy, loadStatementPolicy } from './policy-wiring.js';
import { DEFAULT_POOL_OPTIONS } from './pools/pool.js';
import { PoolManager } from './pools/pool-manager.js';
import { createConnectionResolver } from './projects/connection-resolver.js';
import { ProjectFiles } from './projects/project-files.js';
import { ProjectService } from './projects/project-service.js';
import { SessionSources } from './projects/session-sources.js';
import { TrustStore } from './projects/trust-store.js';
import { CallTracker } from './queries/call-tracker.js';
import { QueryService } from './queries/query-service.js';
import { ConnectionService } from './registry/connection-service.js';
import { SessionTable } from './sessions/session-table.js';
import { TokenService } from './tokens/index.js';

export interface RunDaemonOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Opt into the key file for this start (and remember it). */
  readonly keyFile?: boolean;
  /** MCP over HTTP on this loopback `host:port` (`--http`); else the config's `http`; else off. */
  readonly http?: string;
  /** Accept this identity provider's access tokens on MCP over HTTP (`--oauth-issuer`, `--oauth-audience`); else the config's `oauth`. */
  readonly oauth?: { readonly issuer: string; readonly audience: string };
  /** TLS certificate and key files for MCP over HTTP (`--tls-cert`, `--tls-key`); else the config's `tls`. */
  readonly tls?: { readonly cert: string; readonly key: string };
  /** Called once the socket answers. */
  readonly onReady?: (info: { socket: string; pid: number; keySource: string }) => void;
  /** The daemon lock, already taken by the caller (which then need not load the daemon to learn it lost). */
  readonly lock?: DaemonLock;
}

export interface RunningDaemon {
  readonly paths: Paths;
  /** Resolves when the daemon has stopped. */
  readonly stopped: Promise<void>;
  stop(reason: string): Promise<void>;
}

export { AlreadyRunningError };

const DRAIN_MS = 10_000;

/**
 * The composition root: builds the graph (key store, registry, pools, services, app) and
 * serves it on the Unix socket. Nothing else in the daemon constructs collaborators.
 */
export async function runDaemon(options: RunDaemonOptions = {}): Promise<RunningDaemon> {
  const env = options.env ?? process.env;
  const paths = resolvePaths(env);
  const lock = options.lock ?? takeDaemonLock(paths);
  clearStopped(paths); // a daemon starts: whoever stopped one has been overruled by whoever started this

  const cleanup: (() => void | Promise<void>)[] = [() => lock.release()];
  const runCleanup = async () => {
    for (const step of cleanup.reverse()) await Promise.resolve(step()).catch(() => {});
  };
  try {
    mkdirSync(paths.logDir, { recursive: true, mode: 0o700 });
    const log = pino(
      { base: { pid: process.pid }, redact: { paths: ['password', '*.password', 'secret'], censor: '***' } },
      pino.destination({ dest: paths.log, sync: false, mkdir: true, mode: 0o600 }),
    );
    cleanup.push(() => log.flush());
    const config = readConfig(paths.config);
    // A non-loopback address is refused here, before the registry is opened or anything listens.
    const httpSetting = options.http ?? config.http;
    const tlsFiles = options.tls ?? config.tls;
    const httpAddress = httpSetting ? await resolveListenAddress(httpSetting, undefined, { tls: Boolean(tlsFiles) }) : undefined;
    const oauth = options.oauth ? { ...config.oauth, ...options.oauth } : config.oauth;
    if ((oauth || tlsFiles) && !httpAddress) {
      throw new HanactlError(
        'INVALID_REQUEST',
        'OAuth and TLS settings apply to MCP over HTTP; give --http too (or "http" in config.json).',
      );
    }
    const tls = tlsFiles ? readTlsFiles(tlsFiles) : undefined;
    // The key store and its "next" slot; an interrupted key rotation or import is finished here.
    const slots = keySlots(paths, env, options.keyFile === true || config.keyFile === true);
    const store = slots.current;
    const registry = await openRegistry(slots, paths.registry, log);
    cleanup.push(() => registry.close());
    const keys = new KeyService({ slots, registry, registryPath: paths.registry, hanactlVersion: hanactlVersion(), log });
    // Closed after the pools (cleanup runs in reverse), so calls ended by the shutdown are recorded too.
    const audit = openAudit(paths.audit, config.auditDays ?? DEFAULT_AUDIT_DAYS, log, registry.auditKey());
    cleanup.push(() => audit.close());

    const pools = new PoolManager({
      pool: { ...DEFAULT_POOL_OPTIONS, ...config.pool },
      chosenPool: config.pool ?? {},
      connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
      maxPools: 32,
      loadDriverFactory,
    });
    cleanup.push(() => pools.closeAll());
    const connections = new ConnectionService(registry, pools);
    const trust = new TrustStore(registry);
    const projects = new ProjectService({
      trust,
      files: new ProjectFiles(trust),
      hanaCliHome: join(homedir(), '.hana-cli'),
      sessions: new SessionSources(),
      onReplaced: (previous) => void pools.forget(previous),
    });
    const resolveConnection = createConnectionResolver(connections, projects);
    const calls = new CallTracker({ audit: audit.log });
    // Writes on `--approve-writes` connections wait here; the tracker lists them and audits the decision.
    const approvals = new ApprovalDesk(calls);
    const queries = new QueryService({
      resolve: resolveConnection,
      poolFor: (record) => pools.poolFor(record),
      policy: createStatementPolicy(),
      approvals,
    });
    const curated = new CuratedService({ registry, connections, policy: createStatementPolicy() });
    const sessions = new SessionTable();
    const tokens = new TokenService(registry, {
      assertConnection: (name) => void connections.resolve(name),
      contextNames: (name) => connections.resolve(name).context,
    });
    const grants = new GrantService(registry, { assertConnection: (name) => void connections.resolve(name) });
    let mcpHttp: RunningMcpHttp | undefined;
    const startedAt = Date.now();
    let stopping: Promise<void> | undefined;
    let resolveStopped!: () => void;
    const stopped = new Promise<void>((r) => {
      resolveStopped = r;
    });

    const runDirGuard = privateRunDirGuard(paths.runDir, paths.socket);
    let server: Server | undefined;
    const app = createApp({
      health: () => ({
        name: 'hanactl',
        version: hanactlVersion(),
        pid: process.pid,
        uptimeMs: Date.now() - startedAt,
        keySource: store.source,
        socket: paths.socket,
        home: paths.home,
        node: process.version,
        ...(mcpHttp ? { mcpHttp: mcpHttp.url } : {}),
      }),
      connections,
      queries,
      sessions,
      pools,
      calls,
      approvals,
      audit: audit.log,
      projects,
      trust,
      keys,
      guard: () => {
        try {
          runDirGuard();
        } catch (err) {
          // Whoever connected while the folder was open loses the connection too.
          setImmediate(() => server?.closeAllConnections?.());
          throw err;
        }
      },
      shutdown: () => void stop('requested by a client'),
      stopping: () => stopping !== undefined,
      onClientGone: (path) => log.info({ path }, 'client closed its connection mid-request'),
      onError: (err, path) => log.error({ path, err: err instanceof Error ? err.message : String(err) }, 'unexpected error'),
    });
    const catalog = new CatalogService({
      queries,
      validate: checkRead,
      writeScope: leasedWriteScope({ resolve: (name) => resolveConnection(name), poolFor: (record) => pools.poolFor(record) }),
    });
    app.route('/v1', catalogRoutes({ catalog, sessions, calls }));
    app.route('/v1', tokenRoutes({ tokens }));
    app.route('/v1', grantRoutes({ grants }));
    app.route('/v1', curatedRoutes({ curated }));

    // The tools call the services directly, for relay sessions and MCP over HTTP alike.
    let loading: Promise<typeof import('../shim/server.js')> | undefined;
    const shimServer = () => (loading ??= import('../shim/server.js'));
    const services = { connections, projects, queries, catalog, sessions, calls, curated };
    const maxCallsPerSession =
      config.perSession?.maxConcurrentCalls ?? defaultMaxCallsPerSession(config.pool?.max ?? DEFAULT_POOL_OPTIONS.max);
    const sessionStore = new SessionStore(join(paths.runDir, 'sessions'));
    sessionStore.prune(24 * 60 * 60_000);
    const relays = new RelaySessions({
      services,
      // The SDK's server side loads after the socket listens, so a restart answers relays sooner.
      createServer: async (broker, options) => (await shimServer()).createShimServer(broker, options),
      store: sessionStore,
      guard: runDirGuard,
      maxCallsPerSession,
      onError: (err) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'MCP session error'),
    });

    // MCP over HTTP: the same tools, one server per HTTP session.
    if (httpAddress) {
      const [{ startMcpHttp }, { createShimServer }] = await Promise.all([import('./mcp-http/mcp-http.js'), shimServer()]);
      const running = await startMcpHttp({
        address: httpAddress,
        tokens,
        ...(oauth ? { oauth, grants } : {}),
        ...(tls ? { tls } : {}),
        broker: new ServiceBroker(services),
        brokerFor: (person) => new ServiceBroker(services, { person }),
        ...(config.perPerson?.maxSessions ? { sessions: { maxSessionsPerPerson: config.perPerson.maxSessions } } : {}),
        ...(config.perPerson?.maxConcurrentCalls ? { maxCallsPerPerson: config.perPerson.maxConcurrentCalls } : {}),
        maxCallsPerSession,
        createServer: (broker, { connection, context }) =>
          createShimServer(broker, { ...(connection !== null ? { connection, context } : {}), transport: 'http' }),
        onError: (err, path) => log.error({ path, err: err instanceof Error ? err.message : String(err) }, 'unexpected error'),
      });
      mcpHttp = running;
      cleanup.push(() => running.close());
      log.info({ url: running.url, oauthIssuer: oauth?.issuer, oauthAudience: oauth?.audience }, 'MCP over HTTP listening');
    }

    if (process.platform !== 'win32') rmSync(paths.socket, { force: true }); // we hold the lock: any socket here is stale
    server = createAdaptorServer({ fetch: app.fetch }) as Server;
    // Clients close idle sockets first (shared/daemon-client.ts): no request races the server's close.
    server.keepAliveTimeout = DAEMON_KEEP_ALIVE_MS;
    // The socket serves the HTTP API and the relays' MCP sessions (socket-dispatch.ts).
    const dispatch = dispatchConnections(server, relays);
    const previousUmask = process.umask(0o077);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(paths.socket, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } finally {
      process.umask(previousUmask);
    }
    if (process.platform !== 'win32') chmodSync(paths.socket, 0o600);
    cleanup.push(() => rmSync(paths.socket, { force: true }));
    log.info({ socket: paths.socket, keySource: store.source, version: hanactlVersion() }, 'daemon started');
    // The statement policy loads after the socket listens; statements wait for it (policy-wiring.ts).
    loadStatementPolicy().then(
      () => log.info('statement policy ready'),
      (err) =>
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'statement policy failed to load: statements are refused'),
    );
    void shimServer();

    const stop = (reason: string): Promise<void> => {
      stopping ??= (async () => {
        log.info({ reason }, 'daemon stopping');
        // Writes waiting for a person end unrun now; their sessions hear why before the relays close.
        approvals.stopAll();
        const httpClosed = mcpHttp?.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections?.();
        dispatch.destroyUndecided();
        const relaysClosed = relays.closeAll(DRAIN_MS);
        const drain = setTimeout(() => server.closeAllConnections?.(), DRAIN_MS);
        drain.unref();
        await relaysClosed;
        await closed;
        await httpClosed;
        clearTimeout(drain);
        log.info('daemon stopped');
        await runCleanup();
        resolveStopped();
      })();
      return stopping;
    };
    options.onReady?.({ socket: paths.socket, pid: process.pid, keySource: store.source });
    return { paths, stopped, stop };
  } catch (err) {
    await runCleanup();
    throw err;
  }
}

/** The PEM certificate and key, read once at start; an unreadable file is a sentence naming it. */
function readTlsFiles(files: { readonly cert: string; readonly key: string }): { cert: string; key: string } {
  const read = (path: string, what: string): string => {
    try {
      return readFileSync(path, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new HanactlError('INVALID_REQUEST', `The TLS ${what} file ${path} cannot be read (${why}).`);
    }
  };
  return { cert: read(files.cert, 'certificate'), key: read(files.key, 'key') };
}
