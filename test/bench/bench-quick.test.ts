import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { REPO } from '../helpers/hanactl-home.js';

// The benchmark's smoke test: `npm run bench -- --quick` writes its three files with every
// figure present. Timing lives in the benchmark, never here: no value is checked.

const pgUp = await serverAvailable('postgres');
const mariaUp = pgUp && (await serverAvailable('mysql'));

/** Every figure results.json carries, and a phrase of its row in RESULTS.md. */
const FIGURES = [
  'toolsList',
  'latency',
  'spawnPerCall',
  'bigTable',
  'coldStart',
  'memory',
  'sqliteMemory',
  'concurrencyPg',
  'concurrencyMaria',
] as const;
const ROWS = [
  '`run_query SELECT 1`',
  'same vs DBHub',
  'same vs spawn per call',
  'broker overhead',
  'cost guard on, cheap plan',
  'with a context value (rows separated)',
  'relay cold start: spawn',
  '`node dist/shim.cjs mcp`',
  '`node bin/hanactl.js mcp`',
  'DBHub cold start',
  'memory of 10 sessions: summed PSS',
  'more sessions came and went',
  'memory of 10 DBHub sessions',
  'sessions on one SQLite file',
  'PostgreSQL: errors',
  'PostgreSQL: peak server connections',
  'PostgreSQL: p99 latency',
  'MariaDB: errors',
  'MariaDB: peak server connections',
  'MariaDB: p99 latency',
  '-row table, maxRows 100',
  'daemon RSS growth',
  '`tools/list` JSON size',
];

interface Results {
  quick: boolean;
  figures: Record<string, { error?: string; skipped?: string } | undefined>;
  goals: { figure: string; holds: string }[];
}

let running: ChildProcess | undefined;
const out = mkdtempSync(join(tmpdir(), 'hanactl-bench-out-'));

function runBench(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timed-out run can be stopped whole (the bench cleans up on SIGTERM).
    const child = spawn('npm', ['run', '--silent', 'bench', '--', ...args], {
      cwd: REPO,
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    running = child;
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

afterAll(() => {
  if (running?.pid && running.exitCode === null && running.signalCode === null) {
    try {
      process.kill(-running.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  rmSync(out, { recursive: true, force: true });
});

describe.skipIf(!pgUp)('npm run bench -- --quick', () => {
  it('writes RESULTS.md, results.json and latency.svg with every figure', { timeout: 600_000 }, async () => {
    const committed = join(REPO, 'bench', 'RESULTS.md');
    const before = statSync(committed, { throwIfNoEntry: false })?.mtimeMs;
    const { code, stderr } = await runBench(['--quick', '--out', out]);
    expect(code, stderr).toBe(0);
    expect(stderr).toMatch(/^bench: /m);

    const results = JSON.parse(readFileSync(join(out, 'results.json'), 'utf8')) as Results;
    expect(results.quick).toBe(true);
    for (const key of FIGURES) {
      const figure = results.figures[key];
      expect(figure, key).toBeDefined();
      expect(figure?.error, key).toBeUndefined();
      if (key !== 'concurrencyMaria' || mariaUp) expect(figure?.skipped, key).toBeUndefined();
    }
    expect(results.goals.map((g) => g.figure).length).toBe(ROWS.length);
    for (const goal of results.goals) {
      if (!mariaUp && goal.figure.includes('MariaDB')) continue;
      expect(['yes', 'no', '—'], goal.figure).toContain(goal.holds);
    }

    const md = readFileSync(join(out, 'RESULTS.md'), 'utf8');
    expect(md).toContain('| figure | measured | ratio | goal | holds |');
    expect(md).toMatch(/Quick run/);
    expect(md).toContain(process.version);
    for (const row of ROWS) expect(md, row).toContain(row);

    const svg = readFileSync(join(out, 'latency.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('QUICK RUN');
    // --out kept the committed results as they were.
    expect(statSync(committed, { throwIfNoEntry: false })?.mtimeMs).toBe(before);
  });
});
