#!/usr/bin/env node
// The daemon's CPU time per `run_query SELECT 1` call:
// `node scripts/bench/daemon-cpu.mjs [--calls N] [--rounds R] [--repo DIR ...] [--inproc]`.
// Starts one private daemon per --repo (default: this checkout), opens one session on each
// daemon's socket (no relay process: its CPU is the relay's, not the daemon's), and makes the
// calls in R interleaved rounds, reading each daemon's user + system time from /proc before and
// after its rounds. Process CPU time, unlike wall-clock latency, barely moves with other load on
// a shared machine, and interleaving two checkouts compares them under the same conditions.
// --inproc adds the in-process server (scripts/bench/inproc-server.mjs) for reference.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { startBenchHanactl } from './lib/bench-env.mjs';
import { openSession } from './lib/mcp-session.mjs';
import { Cleanup, cpuMs } from './lib/processes.mjs';
import { openSocketSession } from './lib/socket-session.mjs';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '8000' },
    rounds: { type: 'string', default: '16' },
    repo: { type: 'string', multiple: true },
    inproc: { type: 'boolean', default: false },
    sql: { type: 'string', default: 'SELECT 1' },
  },
});
const here = resolve(import.meta.dirname, '../..');
const repos = (values.repo ?? [here]).map((r) => resolve(r));
const rounds = Number(values.rounds);
const perRound = Math.ceil(Number(values.calls) / rounds);
const pgUrl = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const cleanup = new Cleanup();
try {
  const contenders = [];
  for (const repo of repos) {
    const hanactl = await startBenchHanactl({ repo, poolMax: 4, cleanup });
    await hanactl.add('bench', pgUrl);
    const session = await openSocketSession({ socketPath: hanactl.socket, connection: 'bench', cwd: hanactl.home, cleanup });
    contenders.push({ label: repo, pid: hanactl.daemonPid, session, cpu: 0, ms: 0 });
  }
  if (values.inproc) {
    const session = await openSession({
      command: process.execPath,
      args: [resolve(here, 'scripts/bench/inproc-server.mjs'), '--url', pgUrl],
      env: process.env,
      cleanup,
      label: 'in-process server',
    });
    contenders.push({ label: 'in-process server', pid: session.pid, session, cpu: 0, ms: 0 });
  }
  const call = (c) =>
    c.session.query(values.sql).catch((err) => {
      throw new Error(`${c.label}: ${err.message}`);
    });
  for (const c of contenders) for (let i = 0; i < 500; i++) await call(c);
  // Every other round runs the contenders in reverse order, so that none is always first.
  for (let r = 0; r < rounds; r++) {
    for (const c of r % 2 === 0 ? contenders : [...contenders].reverse()) {
      const before = cpuMs(c.pid);
      const t = process.hrtime.bigint();
      for (let i = 0; i < perRound; i++) await call(c);
      c.ms += Number(process.hrtime.bigint() - t) / 1e6;
      const used = cpuMs(c.pid) - before;
      c.cpu += used;
      (c.rounds ??= []).push(used);
    }
  }
  const calls = perRound * rounds;
  const [first] = contenders;
  for (const c of contenders) {
    // The median over rounds of this contender's CPU against the first one's in the same round: load that comes and goes hits both.
    const ratios = c.rounds.map((used, r) => used / first.rounds[r]).sort((a, b) => a - b);
    const median = ratios[Math.floor(ratios.length / 2)];
    process.stdout.write(
      `${(c.cpu / calls).toFixed(3)} ms CPU/call  ${(c.ms / calls).toFixed(3)} ms wall/call  ${median.toFixed(3)}x the first (median of rounds)  ${calls} calls  ${c.label}\n`,
    );
  }
} finally {
  await cleanup.run();
}
