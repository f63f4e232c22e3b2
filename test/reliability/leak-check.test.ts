import { describe, expect, it } from 'vitest';
import { ALLOWED_KIB_PER_CALL, judgeGrowth, NOISE_FLOOR_KIB, processTree, treePss } from './helpers/leak-check.js';

/** The second half of a long soak (`node scripts/soak.mjs --seconds 600`, 20 sessions). */
const CALLS = 60_000;
const IDLE_KIB = 180 * 1024;

describe('the soak test’s leak arithmetic', () => {
  it('fails a leak of 1 KiB per call', () => {
    const verdict = judgeGrowth(IDLE_KIB, IDLE_KIB + CALLS * 1, CALLS);
    expect(verdict.leaking).toBe(true);
  });

  it('passes a run that only moves within the noise floor, up or down', () => {
    expect(judgeGrowth(IDLE_KIB, IDLE_KIB + NOISE_FLOOR_KIB, CALLS).leaking).toBe(false);
    expect(judgeGrowth(IDLE_KIB, IDLE_KIB - 40 * 1024, CALLS).leaking).toBe(false);
    expect(judgeGrowth(IDLE_KIB, IDLE_KIB + 18 * 1024, 6_000).leaking).toBe(false);
  });

  it('says which leak a run is long enough to catch: at 60,000 calls, anything from 0.91 KiB per call', () => {
    const verdict = judgeGrowth(IDLE_KIB, IDLE_KIB, CALLS);
    expect(verdict.detectableKiBPerCall).toBeLessThan(1);
    expect(verdict.detectableKiBPerCall).toBeGreaterThan(ALLOWED_KIB_PER_CALL);
    expect(judgeGrowth(IDLE_KIB, IDLE_KIB, 6_000).detectableKiBPerCall).toBeGreaterThan(1);
  });

  it('refuses to judge what was not measured', () => {
    expect(() => judgeGrowth(Number.NaN, IDLE_KIB, CALLS)).toThrow(/unmeasured/);
    expect(() => judgeGrowth(IDLE_KIB, IDLE_KIB, 0)).toThrow(/no calls/);
  });
});

describe.skipIf(process.platform !== 'linux')('the processes the soak measures', () => {
  it('are the daemon and everything below it', async () => {
    const { spawn } = await import('node:child_process');
    const parent = spawn(
      process.execPath,
      [
        '-e',
        "require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'inherit' }); setInterval(() => {}, 1000)",
      ],
      { stdio: 'ignore' },
    );
    try {
      let tree: number[] = [];
      for (let i = 0; i < 200 && tree.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 25));
        tree = processTree(parent.pid as number);
      }
      expect(tree[0]).toBe(parent.pid);
      expect(tree).toHaveLength(2);
      expect(treePss(parent.pid as number)).toMatchObject({ processes: 2, kib: expect.any(Number) });
      expect(treePss(parent.pid as number).kib).toBeGreaterThan(1024);
    } finally {
      for (const pid of processTree(parent.pid as number).reverse()) process.kill(pid, 'SIGKILL');
    }
  });
});
