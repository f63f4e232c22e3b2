import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** True while a process with this id exists (zombies excluded once reaped). */
export function processExists(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * True while a process with this id runs. An orphan killed by its watchdog is reaped by
 * PID 1, which may take its time: on Linux a zombie counts as not running.
 */
export function processRunning(pid: number): boolean {
  if (!processExists(pid)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** The process ids of this process's children right now (`pgrep -P`). */
export function childPids(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when there is none
  }
}
