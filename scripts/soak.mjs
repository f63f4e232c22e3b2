#!/usr/bin/env node
// A longer soak than CI's: `node scripts/soak.mjs --seconds 600 [--sessions 20]`. Runs
// test/reliability/soak.test.ts (the same workload, faults and checks) for that long and prints
// its figures: calls, faults, errors, the summed PSS of the daemon and every process it started
// (its SQLite hosts) at rest at the start, midpoint and end, the smallest steady leak per call the
// run could catch (at 600 s it must catch 1 KiB per call), descriptors, server-side connections.
// Build first (`npm run build`): the test spawns bin/hanactl.js from dist/.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '600' },
    sessions: { type: 'string', default: '20' },
  },
});
const seconds = Number(values.seconds);
const sessions = Number(values.sessions);
if (!Number.isInteger(seconds) || seconds < 5 || !Number.isInteger(sessions) || sessions < 1) {
  console.error('usage: node scripts/soak.mjs [--seconds N (>= 5)] [--sessions N]');
  process.exit(2);
}
const root = resolve(import.meta.dirname, '..');
const result = spawnSync('npx', ['vitest', 'run', 'test/reliability/soak.test.ts'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, SOAK_SECONDS: String(seconds), SOAK_SESSIONS: String(sessions) },
});
process.exit(result.status ?? 1);
