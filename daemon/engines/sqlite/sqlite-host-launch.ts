import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { sqliteHostPath } from './sqlite-host-path.js';

/**
 * V8 sized for a host: it holds one small connection and builds at most one capped result at a
 * time. A 1 MB young generation keeps its heap from growing by tens of MB under a steady stream
 * of calls (V8's default lets it reach 16 MB per semi-space before collecting it); no optimising
 * compiler, whose code and feedback cost more memory than the host's little JavaScript gains.
 * The old space stays large enough for a result of `maxRows` wide rows.
 */
export const HOST_V8_FLAGS = ['--max-semi-space-size=1', '--max-old-space-size=256', '--no-opt', '--single-threaded-gc'] as const;

/**
 * The variables a host may see: where the daemon's home is (so a person can tell whose host it
 * is), where SQLite puts its temporary files, and the time zone `localtime` uses. Nothing else of
 * the daemon's environment, which may carry HANACTL_REGISTRY_KEY and other secrets.
 */
const PASSED_ENV = ['HANACTL_HOME', 'TMPDIR', 'SQLITE_TMPDIR', 'TZ'] as const;

/** How `child_process.fork` starts a host. */
export interface HostLaunch {
  readonly modulePath: string;
  readonly execPath: string;
  readonly execArgv: readonly string[];
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
}

let pdeathsig: string | undefined | null;

/**
 * util-linux `setpriv`, when it can set the parent-death signal: the host is then started
 * through it (it execs Node, so no extra process stays) and the kernel kills the host the moment
 * the daemon dies, even while a statement holds the host's only thread. Elsewhere the host runs
 * a watchdog thread instead (several MB more per host).
 */
function setprivPath(): string | undefined {
  if (pdeathsig !== undefined) return pdeathsig ?? undefined;
  pdeathsig = null;
  if (process.platform !== 'linux') return undefined;
  for (const candidate of ['/usr/bin/setpriv', '/bin/setpriv']) {
    if (!existsSync(candidate)) continue;
    const probe = spawnSync(candidate, ['--pdeathsig', 'KILL', '--', process.execPath, '-e', '0'], { stdio: 'ignore', timeout: 5000 });
    if (probe.status === 0) return (pdeathsig = candidate);
  }
  return undefined;
}

/** The command line and environment of a new host; `parentWatch` forces the watchdog thread (tests). */
export function hostLaunch(env: NodeJS.ProcessEnv = process.env, parentWatch: 'auto' | 'thread' = 'auto'): HostLaunch {
  const childEnv: Record<string, string> = {};
  for (const name of PASSED_ENV) {
    const value = env[name];
    if (value !== undefined) childEnv[name] = value;
  }
  const setpriv = parentWatch === 'auto' ? setprivPath() : undefined;
  const modulePath = sqliteHostPath();
  if (setpriv) {
    return {
      modulePath,
      execPath: setpriv,
      execArgv: ['--pdeathsig', 'KILL', '--', process.execPath, ...HOST_V8_FLAGS],
      args: [],
      env: childEnv,
    };
  }
  return { modulePath, execPath: process.execPath, execArgv: [...HOST_V8_FLAGS], args: ['--watch-parent'], env: childEnv };
}
