import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { HanactlError } from './errors.js';
import { installRoot } from './install-root.js';
import type { Paths } from './paths.js';
import { assertPrivateRunDir } from './private-run-dir.js';

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

/** How old a start marker may be before it is taken for one its writer left behind. */
const STALE_MARKER_MS = 20_000;

/**
 * Claims the right to spawn the daemon: an exclusively created marker file in the run folder.
 * Several shims find the daemon gone at once after a crash; each spawning a starter would load
 * node and the CLI several times over on a machine that is already busy (four starters answer
 * in about twice the time of one, measured), though the daemon's lock lets only one win.
 * Returns how to give the claim back, or undefined when another caller holds it.
 */
function claimStart(paths: Paths): (() => void) | undefined {
  assertPrivateRunDir(paths); // nothing is made in, nor started for, a folder another user could swap
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  const marker = paths.startMarker;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(marker, 'wx', 0o600));
      return () => rmSync(marker, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') return () => {}; // cannot mark: start anyway
      try {
        if (Date.now() - statSync(marker).mtimeMs < STALE_MARKER_MS) return undefined;
        rmSync(marker, { force: true }); // left by a starter that died: take it over
      } catch {
        // gone meanwhile: try again
      }
    }
  }
  return undefined;
}

const answers = (options: AutoStartOptions): Promise<boolean> =>
  options.probe().then(
    () => true,
    () => false,
  );

/**
 * Polls until a daemon answers (true), `stop` says to stop waiting (false), or the deadline
 * passes (DAEMON_UNAVAILABLE). `stop` may also throw, to fail with its own error.
 */
async function waitForDaemon(options: AutoStartOptions, deadline: number, stop: () => boolean): Promise<boolean> {
  for (;;) {
    if (await answers(options)) return true;
    if (stop()) return false;
    if (Date.now() > deadline) {
      throw new HanactlError(
        'DAEMON_UNAVAILABLE',
        `The hanactl daemon did not answer within ${(options.timeoutMs ?? 15_000) / 1000} s; see ${options.paths.log}.`,
      );
    }
    await sleep(30);
  }
}

/**
 * Starts a daemon in the background and waits until it answers. Many callers may race: one
 * claims the start and spawns the daemon, the others wait for its socket (and take the start
 * over if the claim is given back without a daemon answering). A daemon that fails to start is
 * reported with its own words to the caller that started it.
 */
export async function startDaemonInBackground(options: AutoStartOptions): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const release = claimStart(options.paths);
    if (release) {
      try {
        if (await spawnAndWait(options, deadline)) return;
      } finally {
        release();
      }
      // The daemon it spawned found the lock still held by one that was stopping: start again.
      await sleep(30);
      continue;
    }
    // Another caller is starting it: wait for its socket, or for the claim to be given back.
    if (await waitForDaemon(options, deadline, () => !existsSync(options.paths.startMarker))) return;
    // Given back: one last look, then start one here (and hear why it fails, if it does).
    if (await answers(options)) return;
  }
}

/**
 * V8 flags of the daemon process. A young generation of 1 MB semi-spaces instead of V8's
 * default 16 MB: measured with 200 MCP sessions opened and closed one after another, the
 * daemon's PSS went 51 -> 87 MB and stayed there after 30 s idle with the default, and
 * 40 -> 64 MB, back to 38 MB within 30 s idle, with this flag; heap snapshots taken after a
 * forced GC showed the live heap grow under 1 MB over those sessions (compiled code), so the
 * growth was garbage waiting for a collection, not sessions kept. `SELECT 1` latency through
 * the daemon measured the same in two interleaved runs (p50 5.60 vs 5.54 ms, p99 36 vs 38 ms).
 * No cap on the old generation: a cap small enough to keep it flat (40 MB) would turn a burst
 * of sessions or a large result into an out-of-memory crash that ends every session.
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

/** Spawns a daemon and waits for one to answer; false when the spawned one exited at once, having lost the lock to a daemon that is gone. */
async function spawnAndWait(options: AutoStartOptions, deadline: number): Promise<boolean> {
  const { paths } = options;
  mkdirSync(paths.logDir, { recursive: true, mode: 0o700 });
  const logPath = join(paths.logDir, `start-${process.pid}-${Date.now()}.log`);
  const fd = openSync(logPath, 'w', 0o600);
  let exit: { code: number | null; signal?: string } | undefined;
  try {
    const child = spawn(
      process.execPath,
      [...DAEMON_NODE_FLAGS, hanactlBinPath(), 'daemon', 'start', '--foreground', ...(options.extraArgs ?? [])],
      {
        detached: true,
        stdio: ['ignore', 'ignore', fd],
        env: options.env ?? process.env,
      },
    );
    child.on('exit', (code, signal) => {
      exit = { code: code ?? (signal ? 128 : null), ...(signal ? { signal } : {}) };
    });
    child.unref();
  } finally {
    closeSync(fd);
  }
  const failed = (): boolean => {
    if (!exit) return false;
    if (exit.code === 0) return true; // lost the lock race: answers (true) or not (start again)
    const said = readFileSync(logPath, 'utf8')
      .trim()
      .split('\n')
      .slice(-3)
      .map((line) => line.replace(/^hanactl: /, ''))
      .join(' ');
    const how = exit.signal ? `it was stopped by ${exit.signal}` : `it exited with code ${exit.code}`;
    throw new HanactlError('DAEMON_UNAVAILABLE', `The hanactl daemon could not start: ${said || how}`);
  };
  try {
    return await waitForDaemon(options, deadline, failed);
  } finally {
    rmSync(logPath, { force: true });
  }
}
