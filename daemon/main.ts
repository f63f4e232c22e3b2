import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import pino from 'pino';
import { readConfig } from '../shared/config.js';
import { HanactlError } from '../shared/errors.js';
import { type Paths, resolvePaths } from '../shared/paths.js';
import { hanactlVersion } from '../shared/version.js';
import { loadDriverFactory } from './drivers/index.js';
import { createApp } from './http/app.js';
import { loadOrCreateKey, selectKeyStore } from './keystore/resolve-key.js';
import { acquireDaemonLock, readRunningPid } from './lifecycle/daemon-lock.js';
import { ensurePrivateDir } from './lifecycle/run-dir.js';
import { DEFAULT_POOL_OPTIONS } from './pools/pool.js';
import { PoolManager } from './pools/pool-manager.js';
import { createStatementPolicy } from './policy-wiring.js';
import { QueryService } from './query/query-service.js';
import { ConnectionService } from './registry/connection-service.js';
import { Registry } from './registry/registry.js';
import { SessionTable } from './sessions/session-table.js';

export interface RunDaemonOptions {
  readonly env?: NodeJS.ProcessEnv;
  /** Opt into the key file for this start (and remember it). */
  readonly keyFile?: boolean;
  /** Called once the socket answers. */
  readonly onReady?: (info: { socket: string; pid: number; keySource: string }) => void;
}

export interface RunningDaemon {
  readonly paths: Paths;
  /** Resolves when the daemon has stopped. */
  readonly stopped: Promise<void>;
  stop(reason: string): Promise<void>;
}

/** Thrown when another daemon already holds the lock. */
export class AlreadyRunningError extends HanactlError {
  readonly pid: number | undefined;
  constructor(pid: number | undefined, socket: string) {
    super('INVALID_REQUEST', `A hanactl daemon is already running${pid ? ` (pid ${pid})` : ''} on ${socket}.`);
    this.pid = pid;
  }
}

const DRAIN_MS = 10_000;

/**
 * The composition root: builds the graph (key store, registry, pools, services, app) and
 * serves it on the Unix socket. Nothing else in the daemon constructs collaborators.
 */
export async function runDaemon(options: RunDaemonOptions = {}): Promise<RunningDaemon> {
  const env = options.env ?? process.env;
  const paths = resolvePaths(env);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  ensurePrivateDir(paths.runDir);
  const lock = acquireDaemonLock(paths.lockFile, paths.pidFile);
  if (!lock) throw new AlreadyRunningError(readRunningPid(paths.pidFile), paths.socket);

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
    const store = selectKeyStore({
      env,
      registryPath: paths.registry,
      keyFilePath: paths.keyFile,
      useKeyFile: options.keyFile === true || config.keyFile === true,
      keychainAccount: `registry:${paths.home}`,
    });
    const key = await loadOrCreateKey(store, paths.registry);
    const registry = Registry.open(paths.registry, key);
    key.fill(0);
    cleanup.push(() => registry.close());

    const pools = new PoolManager({
      pool: { ...DEFAULT_POOL_OPTIONS, ...config.pool },
      connectTimeoutMs: config.connectTimeoutMs ?? 10_000,
      maxPools: 32,
      loadDriverFactory,
    });
    cleanup.push(() => pools.closeAll());
    const connections = new ConnectionService(registry, pools);
    const queries = new QueryService({
      resolve: (name) => connections.resolve(name),
      poolFor: (record) => pools.poolFor(record),
      policy: createStatementPolicy(),
    });
    const sessions = new SessionTable();
    const startedAt = Date.now();
    let stopping: Promise<void> | undefined;
    let resolveStopped!: () => void;
    const stopped = new Promise<void>((r) => {
      resolveStopped = r;
    });

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
      }),
      connections,
      queries,
      sessions,
      pools,
      shutdown: () => void stop('requested by a client'),
      onError: (err, path) => log.error({ path, err: err instanceof Error ? err.message : String(err) }, 'unexpected error'),
    });

    if (process.platform !== 'win32') rmSync(paths.socket, { force: true }); // we hold the lock: any socket here is stale
    const server = createAdaptorServer({ fetch: app.fetch }) as Server;
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

    const stop = (reason: string): Promise<void> => {
      stopping ??= (async () => {
        log.info({ reason }, 'daemon stopping');
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections?.();
        const drain = setTimeout(() => server.closeAllConnections?.(), DRAIN_MS);
        drain.unref();
        await closed;
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
