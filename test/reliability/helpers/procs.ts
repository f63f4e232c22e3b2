import { readdirSync, readFileSync } from 'node:fs';

/** Waits `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns a truthy value or `timeoutMs` passes; returns the last value. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs: number, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value || Date.now() >= deadline) return value;
    await sleep(intervalMs);
  }
}

function readProc(pid: string, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return undefined;
  }
}

/** The process ids whose environment carries `HANACTL_HOME=<home>` (read from /proc/<pid>/environ). */
export function processesOfHome(home: string): { pid: number; cmdline: string; ppid: number }[] {
  const wanted = `HANACTL_HOME=${home}`;
  const found: { pid: number; cmdline: string; ppid: number }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const environ = readProc(entry, 'environ');
    if (!environ?.split('\0').includes(wanted)) continue;
    const cmdline = (readProc(entry, 'cmdline') ?? '').split('\0').join(' ').trim();
    const stat = readProc(entry, 'stat') ?? '';
    // Fields after the parenthesised command name: state, ppid, ...
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? 0);
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (state === 'Z') continue; // a zombie is dead, only not yet reaped by its parent
    found.push({ pid: Number(entry), cmdline, ppid });
  }
  return found;
}

/** Daemon processes (`hanactl daemon start --foreground`) serving `home`, as cli.test.ts counts them. */
export function daemonPids(home: string): number[] {
  return processesOfHome(home)
    .filter((p) => p.cmdline.includes('daemon start --foreground'))
    .map((p) => p.pid)
    .sort((a, b) => a - b);
}

/** Resident set size of a process, in KiB (VmRSS). */
export function rssKiB(pid: number): number {
  const status = readProc(String(pid), 'status') ?? '';
  const match = /VmRSS:\s+(\d+)/.exec(status);
  return match ? Number(match[1]) : Number.NaN;
}

/** Open file descriptors of a process (`/proc/<pid>/fd`). */
export function fdCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return Number.NaN;
  }
}

/** True while `pid` exists (and is not a zombie). */
export function alive(pid: number): boolean {
  const stat = readProc(String(pid), 'stat');
  if (!stat) return false;
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
}

/** SIGKILLs every process of a home (daemons, SQLite workers, strays); for cleanup after failures. */
export function killHome(home: string): void {
  for (const p of processesOfHome(home)) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
