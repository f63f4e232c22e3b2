#!/usr/bin/env node
// Where one hanactl call's CPU goes: `node scripts/bench/profile-call.mjs [--calls N] [--out DIR]`.
// Starts a private daemon and one shim with `--cpu-prof`, makes N sequential `run_query SELECT 1`
// calls on loopback PostgreSQL through the SDK Client, stops both, and prints the heaviest
// functions by self time in each process. The .cpuprofile files stay in DIR for a closer look
// (Chrome DevTools or speedscope open them).
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchHanactl } from './lib/bench-env.mjs';
import { openSession } from './lib/mcp-session.mjs';
import { Cleanup } from './lib/processes.mjs';

const { values } = parseArgs({
  options: { calls: { type: 'string', default: '3000' }, out: { type: 'string', default: '/tmp/hanactl-profile' } },
});
const calls = Number(values.calls);
const out = resolve(values.out);
const repo = resolve(import.meta.dirname, '../..');
const pgUrl = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
mkdirSync(join(out, 'daemon'), { recursive: true });
mkdirSync(join(out, 'shim'), { recursive: true });

const cleanup = new Cleanup();
try {
  // --cpu-prof is not allowed in NODE_OPTIONS: the daemon and the shim are started with it on
  // the command line (the shim as its bundle, which is what bin/hanactl-mcp runs).
  const hanactl = await startBenchHanactl({ repo, poolMax: 4, cleanup });
  await hanactl.add('bench', pgUrl);
  await hanactl.cli('daemon', 'stop');
  const daemon = spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${join(out, 'daemon')}`, hanactl.bin, 'daemon', 'start', '--foreground'],
    {
      env: hanactl.env,
      stdio: 'ignore',
    },
  );
  const daemonExit = new Promise((r) => daemon.on('exit', r));
  cleanup.add('stop the profiled daemon', () => daemon.kill('SIGKILL'));
  for (let i = 0; i < 100; i++) {
    if (
      await hanactl.cli('daemon', 'status').then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const session = await openSession({
    command: process.execPath,
    args: ['--cpu-prof', `--cpu-prof-dir=${join(out, 'shim')}`, join(repo, 'dist/shim.cjs'), 'mcp', '--connection', 'bench'],
    env: hanactl.env,
    cleanup,
    label: 'shim',
  });
  for (let i = 0; i < 200; i++) await session.query('SELECT 1');
  const t = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) await session.query('SELECT 1');
  const perCall = Number(process.hrtime.bigint() - t) / 1e6 / calls;
  process.stderr.write(`${calls} calls, ${perCall.toFixed(3)} ms each (profiling slows both processes)\n`);
  await session.close();
  await hanactl.cli('daemon', 'stop');
  await daemonExit;
} finally {
  await cleanup.run();
}

for (const side of ['shim', 'daemon']) {
  for (const file of readdirSync(join(out, side)).filter((f) => f.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(join(out, side, file), 'utf8'));
    const self = new Map();
    const dt = new Map();
    for (const [i, id] of profile.samples.entries()) dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
    let total = 0;
    for (const node of profile.nodes) {
      const us = dt.get(node.id) ?? 0;
      total += us;
      const f = node.callFrame;
      const key = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*?\/(dist|scripts)\//, '$1/')}:${f.lineNumber + 1}`;
      self.set(key, (self.get(key) ?? 0) + us);
    }
    const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, v]) => a + v, 0);
    process.stdout.write(`\n## ${side} (${file}): busy ${((total - idle) / 1e3).toFixed(0)} ms of ${(total / 1e3).toFixed(0)} ms\n`);
    const busy = total - idle;
    const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)} %`;
    const groups = new Map();
    for (const node of profile.nodes) {
      const url = node.callFrame.url;
      const group = url.includes('node_modules/')
        ? url.replace(/^.*node_modules\/((@[^/]+\/)?[^/]+).*$/, '$1')
        : url.startsWith('node:')
          ? 'node internals'
          : /\/(dist|scripts)\//.test(url)
            ? url.replace(/^.*\/(dist|scripts)\/([^/]+\/)?.*$/, '$1/$2')
            : node.callFrame.functionName || '(native)';
      if (group === '(idle)') continue;
      groups.set(group, (groups.get(group) ?? 0) + (dt.get(node.id) ?? 0));
    }
    process.stdout.write('self time by where the code lives:\n');
    for (const [group, us] of [...groups].sort((a, b) => b[1] - a[1]).slice(0, 14)) process.stdout.write(`${pct(us)}  ${group}\n`);
    process.stdout.write('heaviest functions by self time:\n');
    for (const [key, us] of [...self]
      .filter(([k]) => !k.startsWith('(idle)'))
      .sort((a, b) => b[1] - a[1])
      .slice(0, 25)) {
      process.stdout.write(`${pct(us)}  ${key}\n`);
    }
  }
}
