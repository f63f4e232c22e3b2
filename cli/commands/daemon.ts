import type { RunningDaemon } from '../../daemon/main.js';
import { startDaemonInBackground } from '../../shared/auto-start.js';
import { readConfig, writeConfig } from '../../shared/config.js';
import { isHanactlError } from '../../shared/errors.js';
import type { Health } from '../../shared/schemas.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';

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

/** `hanactl daemon start [--foreground] [--key-file]`. */
export async function start(ctx: CliContext, options: { foreground?: boolean; keyFile?: boolean; json?: boolean }): Promise<void> {
  if (options.keyFile) {
    const { mkdirSync } = await import('node:fs');
    mkdirSync(ctx.paths.home, { recursive: true, mode: 0o700 });
    rememberKeyFile(ctx);
  }
  if (options.foreground) return startForeground(ctx);
  const before = await running(ctx);
  if (!before) await startDaemonInBackground({ paths: ctx.paths, probe: () => ctx.probe.health() });
  const health = before ?? (await ctx.probe.health());
  if (options.json) return printJson(ctx, { ...health, alreadyRunning: Boolean(before) });
  ctx.out(
    before
      ? `The daemon is already running (pid ${health.pid}) on ${health.socket}.`
      : `Daemon started (pid ${health.pid}) on ${health.socket}; registry key from ${health.keySource}.`,
  );
}

async function startForeground(ctx: CliContext): Promise<void> {
  const { runDaemon, AlreadyRunningError } = await import('../../daemon/main.js');
  let daemon: RunningDaemon;
  try {
    daemon = await runDaemon({
      onReady: ({ socket, pid, keySource }) => ctx.err(`hanactl daemon ${pid} listening on ${socket} (registry key from ${keySource}); Ctrl-C stops it.`),
    });
  } catch (err) {
    if (err instanceof AlreadyRunningError) {
      ctx.err(err.message);
      return;
    }
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
  if (!health) {
    if (options.json) return printJson(ctx, { running: false, stopped: false });
    ctx.out('The daemon is not running.');
    return;
  }
  await ctx.probe.shutdown();
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (!isAlive(health.pid)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  if (isAlive(health.pid)) throw new CliExit(EXIT.failure, `The daemon (pid ${health.pid}) did not stop within 20 s; stop it with \`kill ${health.pid}\`.`);
  if (options.json) return printJson(ctx, { running: false, stopped: true, pid: health.pid });
  ctx.out(`Daemon stopped (pid ${health.pid}).`);
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
      ].join('\n'),
    );
  } else {
    ctx.out(`The daemon is not running (socket ${ctx.paths.socket}). Start it with: hanactl daemon start`);
  }
  if (!health) throw new CliExit(EXIT.failure);
}
