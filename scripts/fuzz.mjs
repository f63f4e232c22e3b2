#!/usr/bin/env node
// A longer fuzz run than CI's: `node scripts/fuzz.mjs --runs 5000 [--seed N] [--suite api|shim|cli]`.
// Runs the fast-check properties of test/reliability/fuzz-*.test.ts with that many cases each
// (the CLI property spawns processes, so it runs runs/16 batches of four), against a real
// daemon, shim and CLI. A failure prints its seed; pass it back with --seed to replay.
// Build first (`npm run build`).
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5000' },
    seed: { type: 'string' },
    suite: { type: 'string', multiple: true },
    'time-limit': { type: 'string', default: '3600' },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) {
  console.error('usage: node scripts/fuzz.mjs [--runs N] [--seed N] [--suite api|shim|cli ...] [--time-limit SECONDS]');
  process.exit(2);
}
const suites = values.suite?.length ? values.suite : ['api', 'shim', 'cli'];
const files = suites.map((s) => `test/reliability/fuzz-${s}.test.ts`);
const env = {
  ...process.env,
  FUZZ_RUNS: String(runs),
  FUZZ_TIME_LIMIT_MS: String(Number(values['time-limit']) * 1000),
  ...(values.seed ? { FUZZ_SEED: values.seed } : {}),
};
const result = spawnSync('npx', ['vitest', 'run', ...files], {
  cwd: resolve(import.meta.dirname, '..'),
  stdio: 'inherit',
  env,
});
process.exit(result.status ?? 1);
