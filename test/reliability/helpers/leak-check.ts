import { readdirSync, readFileSync } from 'node:fs';

/**
 * How much the summed PSS of the daemon and its processes may differ between two moments at
 * rest that no leak explains: V8 resizing the daemon's heap (measured: from -2 to +18 MiB between
 * the midpoint and the end of a 60 s soak on a loaded 2-core machine), pages the kernel shares
 * or not, a SQLite host replaced in between.
 */
export const NOISE_FLOOR_KIB = 24 * 1024;
/** Growth per call tolerated on top of the floor; a leak of twice this per call must fail. */
export const ALLOWED_KIB_PER_CALL = 0.5;

/** What an idle-to-idle comparison says about a run. */
export interface LeakVerdict {
  readonly growthKiB: number;
  readonly allowanceKiB: number;
  readonly calls: number;
  /** The smallest steady leak per call this run would catch (KiB). */
  readonly detectableKiBPerCall: number;
  readonly leaking: boolean;
}

/**
 * Judges the growth between two measurements at rest (`beforeKiB`, `afterKiB`) with `calls`
 * calls between them: the allowance is the noise floor plus `ALLOWED_KIB_PER_CALL` per call, so
 * a longer run allows more in total but never a steady leak of `detectableKiBPerCall` or more.
 */
export function judgeGrowth(beforeKiB: number, afterKiB: number, calls: number): LeakVerdict {
  if (!Number.isFinite(beforeKiB) || !Number.isFinite(afterKiB)) throw new Error(`unmeasured memory: ${beforeKiB} → ${afterKiB} KiB`);
  if (!(calls > 0)) throw new Error('no calls between the two measurements');
  const allowanceKiB = NOISE_FLOOR_KIB + ALLOWED_KIB_PER_CALL * calls;
  const growthKiB = afterKiB - beforeKiB;
  return { growthKiB, allowanceKiB, calls, detectableKiBPerCall: allowanceKiB / calls, leaking: growthKiB > allowanceKiB };
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'latin1');
  } catch {
    return undefined;
  }
}

/** `pid` and every process below it (children, their children, ...), from /proc. */
export function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProc(Number(entry), 'stat');
    if (!stat) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const tree: number[] = [];
  const visit = (p: number): void => {
    tree.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return tree;
}

/** Proportional set size of one process in KiB (`smaps_rollup`); 0 for one that has just ended. */
export function pssKiB(pid: number): number {
  const match = /^Pss:\s+(\d+) kB/m.exec(readProc(pid, 'smaps_rollup') ?? '');
  return match ? Number(match[1]) : 0;
}

/** Summed PSS of the daemon and every process it started, in KiB, and how many processes that is. */
export function treePss(pid: number): { kib: number; processes: number } {
  const tree = processTree(pid);
  return { kib: tree.reduce((sum, p) => sum + pssKiB(p), 0), processes: tree.length };
}

/**
 * Summed PSS at rest once it has settled: V8 shrinks a heap some seconds after the work stops,
 * so readings are taken every 500 ms until two in a row differ by less than 256 KiB (at most
 * `maxMs`), and the last is returned.
 */
export async function settledTreePss(pid: number, maxMs = 15_000): Promise<{ kib: number; processes: number }> {
  const deadline = Date.now() + maxMs;
  let last = treePss(pid);
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    const next = treePss(pid);
    const settled = Math.abs(next.kib - last.kib) < 256;
    last = next;
    if (settled) break;
  }
  return last;
}
