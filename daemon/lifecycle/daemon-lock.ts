import { createRequire } from 'node:module';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { HanactlError } from '../../shared/errors.js';
import type { Paths } from '../../shared/paths.js';
import { ensurePrivateDir } from './run-dir.js';

const require = createRequire(import.meta.url);

interface LockDb {
  pragma(sql: string): unknown;
  exec(sql: string): void;
  close(): void;
}

/** A held daemon lock; releasing it lets the next daemon start. */
export interface DaemonLock {
  release(): void;
}

/**
 * One daemon per user. The lock is an exclusive SQLite lock (an OS file lock underneath):
 * taking it is atomic, and the kernel drops it when the holder dies, even by `kill -9`, so
 * a stale lock can never block a restart nor be taken over by two starters at once.
 * Returns null when another daemon holds it.
 */
export function acquireDaemonLock(lockPath: string, pidPath: string): DaemonLock | null {
  const Database = require('better-sqlite3-multiple-ciphers') as new (path: string, options: { timeout: number }) => LockDb;
  const db = new Database(lockPath, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code?.startsWith('SQLITE_BUSY')) return null;
    throw err;
  }
  writeFileSync(pidPath, `${process.pid}\n`, { mode: 0o600 });
  let held = true;
  return {
    release() {
      if (!held) return;
      held = false;
      if (readRunningPid(pidPath) === process.pid) rmSync(pidPath, { force: true });
      db.close();
    },
  };
}

/** The pid the running daemon wrote, if any. */
export function readRunningPid(pidPath: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidPath, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Thrown when another daemon already holds the lock. */
export class AlreadyRunningError extends HanactlError {
  readonly pid: number | undefined;
  constructor(pid: number | undefined, socket: string) {
    super('INVALID_REQUEST', `A hanactl daemon is already running${pid ? ` (pid ${pid})` : ''} on ${socket}.`);
    this.pid = pid;
  }
}

/**
 * What a daemon does first: make its home (0700) and its checked socket folder, then take the
 * lock, or throw AlreadyRunningError naming the daemon that holds it. Light enough for a starter
 * to call before it loads the daemon itself.
 */
export function takeDaemonLock(paths: Pick<Paths, 'home' | 'runDir' | 'lockFile' | 'pidFile' | 'socket'>): DaemonLock {
  ensurePrivateDir(paths);
  const lock = acquireDaemonLock(paths.lockFile, paths.pidFile);
  if (!lock) throw new AlreadyRunningError(readRunningPid(paths.pidFile), paths.socket);
  return lock;
}
