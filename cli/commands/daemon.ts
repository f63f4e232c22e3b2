import type { DaemonLock } from '../../daemon/lifecycle/daemon-lock.js';
import type { RunningDaemon } from '../../daemon/main.js';
import { startDaemonInBackground } from '../../shared/auto-start.js';
import { cliCommand, hanactlCommand } from '../../shared/cli-command.js';
import { readConfig, writeConfig } from '../../shared/config.js';
import { isHanactlError } from '../../shared/errors.js';
import type { Health } from '../../shared/schemas.js';
import { markStopped } from '../../shared/stopped-marker.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';
import { progressLine } from '../style.js';

async function running(ctx: CliContext): Promise<Health | undefined> {
  try {
    return await ctx.probe.health();
  } catch (err) {
    if (isHanactlError(err) && err.code === 'DAEMON_UNAVAILABLE') return undefined;
    throw err;
  }
}

function rememberKeyFile(ctx: CliContext): void {
  const config = readConfig(ctx.paths.config);
  if (!config.keyFile) writeConfig(ctx.paths.config, { ...config, keyFile: true });
}

/** The flags of `daemon start` that shape MCP over HTTP. */
export interface HttpStartOptions {
  /** `--http host:port`, or `--http` alone with `--listen host:port`. */
  http?: string | boolean;
  listen?: string;
  oauthIssuer?: string;
  oauthAudience?: string;
  tlsCert?: string;
  tlsKey?: string;
}

/** What the daemon is started with: the address and the OAuth and TLS settings given as flags. */
interface HttpStart {
  readonly http?: string;
  readonly oauth?: { readonly issuer: string; readonly audience: string };
  readonly tls?: { readonly cert: string; readonly key: string };
}

function pairOf<A extends string, B extends string>(a: [A, string | undefined], b: [B, string | undefined]): boolean {
  if ((a[1] === undefined) !== (b[1] === undefined)) {
    const [given, missing] = a[1] === undefined ? [b[0], a[0]] : [a[0], b[0]];
    throw new CliExit(EXIT.usage, `${given} needs ${missing} too.`);
  }
  return a[1] !== undefined;
}

/**
 * The MCP over HTTP flags, checked: pairs given together, an address that is loopback
 * host:port unless TLS is on (a non-loopback listener without TLS is refused). A usage error,
 * said before anything starts. Settings left to config.json are checked by the daemon.
 */
async function checkHttp(options: HttpStartOptions, configPath: string): Promise<HttpStart> {
  const oauth = pairOf(['--oauth-issuer', options.oauthIssuer], ['--oauth-audience', options.oauthAudience]);
  const tls = pairOf(['--tls-cert', options.tlsCert], ['--tls-key', options.tlsKey]);
  const address = typeof options.http === 'string' ? options.http : options.listen;
  if (typeof options.http === 'string' && options.listen !== undefined && options.listen !== options.http) {
    throw new CliExit(EXIT.usage, `--http ${options.http} and --listen ${options.listen} name two addresses; give one.`);
  }
  if (options.http === true && address === undefined) {
    if (!readConfig(configPath).http) throw new CliExit(EXIT.usage, '--http needs an address: --listen <host:port>.');
  }
  if (oauth) {
    try {
      const url = new URL(options.oauthIssuer as string);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      throw new CliExit(EXIT.usage, `--oauth-issuer ${options.oauthIssuer} is not an http(s) URL.`);
    }
  }
  if (address !== undefined) {
    const { resolveListenAddress } = await import('../../daemon/mcp-http/listen-address.js');
    try {
      await resolveListenAddress(address, undefined, { tls });
    } catch (err) {
      throw isHanactlError(err) ? new CliExit(EXIT.usage, err.message) : err;
    }
  }
  return {
    ...(address !== undefined ? { http: address } : {}),
    ...(oauth ? { oauth: { issuer: options.oauthIssuer as string, audience: options.oauthAudience as string } } : {}),
    ...(tls ? { tls: { cert: options.tlsCert as string, key: options.tlsKey as string } } : {}),
  };
}

/** The same settings as flags of the background daemon's `daemon start --foreground`. */
function argsOf(start: HttpStart): string[] {
  return [
    ...(start.http ? ['--http', start.http] : []),
    ...(start.oauth ? ['--oauth-issuer', start.oauth.issuer, '--oauth-audience', start.oauth.audience] : []),
    ...(start.tls ? ['--tls-cert', start.tls.cert, '--tls-key', start.tls.key] : []),
  ];
}

/** Where MCP over HTTP answers, for the start and status lines. */
const httpLine = (health: Health) =>
  health.mcpHttp ? `MCP over HTTP at ${health.mcpHttp}/mcp/<connection> (a bearer token from \`${cliCommand()} token create\`)` : undefined;

/**
 * `hanactl daemon start [--foreground] [--key-file] [--audit-days N] [--http 127.0.0.1:PORT]
 * [--listen host:port --oauth-issuer URL --oauth-audience AUD --tls-cert FILE --tls-key FILE]`.
 */
export async function start(
  ctx: CliContext,
  options: { foreground?: boolean; keyFile?: boolean; auditDays?: number; json?: boolean } & HttpStartOptions,
): Promise<void> {
  const httpStart = await checkHttp(options, ctx.paths.config);
  const http = httpStart.http;
  if (options.auditDays !== undefined) (await import('./audit.js')).rememberAuditDays(ctx, options.auditDays);
  if (options.keyFile) {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(ctx.paths.home, { recursive: true, mode: 0o700 });
    rememberKeyFile(ctx);
  }
  if (options.foreground) return startForeground(ctx, httpStart);
  const before = await running(ctx);
  if (before && options.auditDays !== undefined)
    ctx.err(`Audit records will be kept ${options.auditDays} days from the daemon's next start.`);
  if (!before) {
    const progress = progressLine(process.stderr, 'Starting the daemon…');
    try {
      const extraArgs = argsOf(httpStart);
      await startDaemonInBackground({ paths: ctx.paths, probe: () => ctx.probe.health(), extraArgs });
    } finally {
      progress.done();
    }
  }
  const health = before ?? (await ctx.probe.health());
  if (before && http && !health.mcpHttp?.endsWith(`//${http}`)) {
    ctx.err(
      `The running daemon ${health.mcpHttp ? `serves MCP over HTTP at ${health.mcpHttp}` : 'does not serve MCP over HTTP'}; stop it (\`${cliCommand()} daemon stop\`) and start it again with --http ${http}.`,
    );
  }
  if (options.json) return printJson(ctx, { ...health, alreadyRunning: Boolean(before) });
  ctx.out(
    before
      ? `The daemon is already running (pid ${health.pid}) on ${health.socket}.`
      : `Daemon started (pid ${health.pid}) on ${health.socket}; registry key from ${health.keySource}.`,
  );
  const line = httpLine(health);
  if (line) ctx.out(`${line}.`);
}

async function startForeground(ctx: CliContext, http: HttpStart): Promise<void> {
  // Racing starters (several shims after a crash) take the lock before loading the daemon: the
  // losers learn it at once and exit, and only the winner pays for loading it.
  const { AlreadyRunningError, takeDaemonLock } = await import('../../daemon/lifecycle/daemon-lock.js');
  let lock: DaemonLock;
  try {
    lock = takeDaemonLock(ctx.paths);
  } catch (err) {
    if (!(err instanceof AlreadyRunningError)) throw err;
    ctx.err(err.message);
    return;
  }
  let daemon: RunningDaemon;
  try {
    const { runDaemon } = await import('../../daemon/main.js');
    daemon = await runDaemon({
      lock,
      ...http,
      onReady: ({ socket, pid, keySource }) =>
        ctx.err(`hanactl daemon ${pid} listening on ${socket} (registry key from ${keySource}); Ctrl-C stops it.`),
    });
  } catch (err) {
    lock.release();
    throw err;
  }
  const onSignal = (signal: string) => void daemon.stop(signal);
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  process.once('SIGHUP', onSignal);
  await daemon.stopped;
  // Connections of pools and the logger may hold handles; the daemon's work is done.
  setTimeout(() => process.exit(0), 200).unref();
}

/** `hanactl daemon stop`: finishes in-flight calls, closes pools, removes the socket. */
export async function stop(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const health = await running(ctx);
  // Before the daemon goes: an editor's relay that finds it gone must not bring it back.
  const restart = restartCommand();
  markStopped(ctx.paths, restart);
  const stays = `Agents' sessions will not start it again; \`${restart}\` does.`;
  if (!health) {
    if (options.json) return printJson(ctx, { running: false, stopped: false });
    ctx.out(`The daemon is not running. ${stays}`);
    return;
  }
  await ctx.probe.shutdown();
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (!isAlive(health.pid)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (isAlive(health.pid))
    throw new CliExit(EXIT.failure, `The daemon (pid ${health.pid}) did not stop within 20 s; stop it with \`kill ${health.pid}\`.`);
  if (options.json) return printJson(ctx, { running: false, stopped: true, pid: health.pid });
  ctx.out(`Daemon stopped (pid ${health.pid}). ${stays}`);
}

/** How the person who stops this home's daemon starts it again, from any terminal. */
function restartCommand(): string {
  return `${hanactlCommand()} daemon start`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** `hanactl daemon status`: exit 0 when running, 1 when not. */
export async function status(ctx: CliContext, options: { json?: boolean }): Promise<void> {
  const health = await running(ctx);
  if (options.json) {
    printJson(ctx, health ? { running: true, ...health } : { running: false, socket: ctx.paths.socket });
  } else if (health) {
    ctx.out(
      [
        `running      pid ${health.pid}, version ${health.version}, up ${Math.round(health.uptimeMs / 1000)} s`,
        `socket       ${health.socket}`,
        `key source   ${health.keySource}${health.keySource === 'file' ? ' (a key file beside the registry; weaker than the OS keychain)' : ''}`,
        `home         ${health.home}`,
        ...(health.mcpHttp ? [`mcp http     ${health.mcpHttp}/mcp/<connection>`] : []),
      ].join('\n'),
    );
  } else {
    ctx.out(`The daemon is not running (socket ${ctx.paths.socket}). Start it with: ${cliCommand()} daemon start`);
  }
  if (!health) throw new CliExit(EXIT.failure);
}
