import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import pino from 'pino';
import { readConfig } from '../shared/config.js';
import { DAEMON_KEEP_ALIVE_MS } from '../shared/daemon-client.js';
import { HanactlError } from '../shared/errors.js';
import { type Paths, resolvePaths } from '../shared/paths.js';
import { clearStopped } from '../shared/stopped-marker.js';
import { hanactlVersion } from '../shared/version.js';
import { createDaemon } from './create-daemon.js';
import { AlreadyRunningError, type DaemonLock, takeDaemonLock } from './lifecycle/daemon-lock.js';
import { logFatalErrors } from './lifecycle/fatal-log.js';
import { privateRunDirGuard } from './lifecycle/run-dir.js';
import { dispatchConnections } from './mcp/socket-dispatch.js';
import { resolveListenAddress } from './mcp-http/listen-address.js';
import type { RunningMcpHttp } from './mcp-http/mcp-http.js';

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
 * Serves the daemon: takes the lock, builds the graph (createDaemon, the composition root),
 * listens on the Unix socket (and MCP over HTTP when asked), and stops it all in order.
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
    const destination = pino.destination({ dest: paths.log, sync: false, mkdir: true, mode: 0o600 });
    const log = pino({ base: { pid: process.pid }, redact: { paths: ['password', '*.password', 'secret'], censor: '***' } }, destination);
    cleanup.push(() => log.flush());
    // An error nothing caught ends the daemon, with a line in its log that says why.
    cleanup.push(
      logFatalErrors(log, () => {
        try {
          destination.flushSync();
        } catch {
          // A write in progress: pino's own exit handling gets the rest out.
        }
      }),
    );
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

    let server: Server | undefined;
    let stopping: Promise<void> | undefined;
    let resolveStopped!: () => void;
    const stopped = new Promise<void>((r) => {
      resolveStopped = r;
    });
    const runDirGuard = privateRunDirGuard(paths.runDir, paths.socket);
    const daemon = await createDaemon({
      paths,
      env,
      settings: config,
      keyFile: options.keyFile === true,
      log,
      host: {
        socket: paths.socket,
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
      },
    });
    // Closed in reverse: the pools, then the audit trail (calls ended by the shutdown are recorded), then the registry.
    cleanup.push(() => daemon.close());

    // MCP over HTTP: the same tools, one server per HTTP session.
    let mcpHttp: RunningMcpHttp | undefined;
    if (httpAddress) {
      const running = await daemon.serveMcpHttp(httpAddress, { ...(oauth ? { oauth } : {}), ...(tls ? { tls } : {}) });
      mcpHttp = running;
      cleanup.push(() => running.close());
      log.info({ url: running.url, oauthIssuer: oauth?.issuer, oauthAudience: oauth?.audience }, 'MCP over HTTP listening');
    }

    if (process.platform !== 'win32') rmSync(paths.socket, { force: true }); // we hold the lock: any socket here is stale
    server = createAdaptorServer({ fetch: daemon.app.fetch }) as Server;
    // Clients close idle sockets first (shared/daemon-client.ts): no request races the server's close.
    server.keepAliveTimeout = DAEMON_KEEP_ALIVE_MS;
    // The socket serves the HTTP API and the relays' MCP sessions (socket-dispatch.ts).
    const dispatch = dispatchConnections(server, daemon.relays);
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
    log.info({ socket: paths.socket, keySource: daemon.keySource, version: hanactlVersion() }, 'daemon started');
    // The statement policy and the MCP server side load after the socket listens; statements wait for the policy (policy-wiring.ts).
    daemon.warm().then(
      () => log.info('statement policy ready'),
      (err: unknown) =>
        log.error({ err: err instanceof Error ? err.message : String(err) }, 'statement policy failed to load: statements are refused'),
    );

    const stop = (reason: string): Promise<void> => {
      stopping ??= (async () => {
        log.info({ reason }, 'daemon stopping');
        // Writes waiting for a person end unrun now; their sessions hear why before the relays close.
        daemon.approvals.stopAll();
        const httpClosed = mcpHttp?.close();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections?.();
        dispatch.destroyUndecided();
        const relaysClosed = daemon.relays.closeAll(DRAIN_MS);
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
    options.onReady?.({ socket: paths.socket, pid: process.pid, keySource: daemon.keySource });
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
