import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Every file hanactl keeps, derived from one home folder. */
export interface Paths {
  readonly home: string;
  readonly runDir: string;
  readonly socket: string;
  readonly lockFile: string;
  readonly pidFile: string;
  /** Held by the one caller starting a daemon in the background (shared/auto-start.ts). */
  readonly startMarker: string;
  /** Written when a person stops the daemon; agents' relays do not start it again while it stands (shared/stopped-marker.ts). */
  readonly stoppedMarker: string;
  readonly registry: string;
  readonly keyFile: string;
  readonly config: string;
  readonly logDir: string;
  readonly log: string;
  readonly startLog: string;
  readonly audit: string;
}

/**
 * Resolves the paths from the environment. `HANACTL_HOME` relocates everything (tests use a
 * temp folder each); otherwise data lives in `~/.hanactl` and the socket in
 * `$XDG_RUNTIME_DIR/hanactl` (else `~/.hanactl/run`).
 */
export function resolvePaths(env: NodeJS.ProcessEnv = process.env): Paths {
  const explicit = env.HANACTL_HOME;
  const home = explicit ? resolve(explicit) : join(homedir(), '.hanactl');
  const runDir = explicit || !env.XDG_RUNTIME_DIR ? join(home, 'run') : join(env.XDG_RUNTIME_DIR, 'hanactl');
  const logDir = join(home, 'logs');
  return {
    home,
    runDir,
    socket: process.platform === 'win32' ? `\\\\.\\pipe\\hanactl-${home.replace(/[^A-Za-z0-9]/g, '_')}` : join(runDir, 'daemon.sock'),
    lockFile: join(runDir, 'daemon.lock'),
    pidFile: join(runDir, 'daemon.pid'),
    startMarker: join(runDir, 'daemon.starting'),
    stoppedMarker: join(runDir, 'daemon.stopped'),
    registry: join(home, 'registry.db'),
    keyFile: join(home, 'registry.key'),
    config: join(home, 'config.json'),
    logDir,
    log: join(logDir, 'daemon.log'),
    startLog: join(logDir, 'daemon-start.log'),
    audit: join(home, 'audit.db'),
  };
}
