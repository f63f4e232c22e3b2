import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { HanactlError } from './errors.js';
import { installRoot } from './install-root.js';
import type { Paths } from './paths.js';

/** The CLI entry that starts the daemon (bin/hanactl.js), found from this compiled file. */
export function hanactlBinPath(): string {
  return join(installRoot(), 'bin', 'hanactl.js');
}

export interface AutoStartOptions {
  readonly paths: Paths;
  /** Resolves once a daemon answers; the health probe. */
  readonly probe: () => Promise<unknown>;
  readonly timeoutMs?: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly extraArgs?: readonly string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a daemon in the background and waits until it answers. Many callers may race:
 * the daemon's lock lets exactly one win, the others exit quietly, and every caller waits
 * for the winner's socket. A daemon that fails to start is reported with its own words.
 */
export async function startDaemonInBackground(options: AutoStartOptions): Promise<void> {
  const { paths } = options;
  mkdirSync(paths.logDir, { recursive: true, mode: 0o700 });
  const logPath = join(paths.logDir, `start-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logPath, 'w', 0o600);
  let exit: { code: number | null; signal?: string } | undefined;
  try {
    const child = spawn(process.execPath, [hanactlBinPath(), 'daemon', 'start', '--foreground', ...(options.extraArgs ?? [])], {
      detached: true,
      stdio: ['ignore', 'ignore', fd],
      env: options.env ?? process.env,
    });
    child.on('exit', (code, signal) => {
      exit = { code: code ?? (signal ? 128 : null), ...(signal ? { signal } : {}) };
    });
    child.unref();
  } finally {
    closeSync(fd);
  }
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  try {
    for (;;) {
      try {
        await options.probe();
        return;
      } catch {
        // not answering yet
      }
      if (exit && exit.code !== 0) {
        const said = readFileSync(logPath, 'utf8')
          .trim()
          .split('\n')
          .slice(-3)
          .map((line) => line.replace(/^hanactl: /, ''))
          .join(' ');
        const how = exit.signal ? `it was stopped by ${exit.signal}` : `it exited with code ${exit.code}`;
        throw new HanactlError('DAEMON_UNAVAILABLE', `The hanactl daemon could not start: ${said || how}`);
      }
      if (Date.now() > deadline) {
        throw new HanactlError('DAEMON_UNAVAILABLE', `The hanactl daemon did not answer within ${(options.timeoutMs ?? 15_000) / 1000} s; see ${paths.log}.`);
      }
      await sleep(exit ? 100 : 30);
    }
  } finally {
    rmSync(logPath, { force: true });
  }
}
