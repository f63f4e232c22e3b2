// Figure: memory of 10 sessions — summed PSS of 10 shims + the daemon vs 10 in-process servers.
import { openSession, openSessions } from '../lib/mcp-session.mjs';
import { pssBytes } from '../lib/processes.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Opens `count` sessions, runs a few calls on each (a warm connection), sums their PSS, closes them. */
async function measureSet(count, open, extraPids = []) {
  const sessions = await openSessions(count, 5, open);
  try {
    for (const s of sessions) for (let i = 0; i < 3; i++) await s.query('SELECT 1');
    await sleep(300); // let start-up garbage settle the same way for both sets
    const pids = [...sessions.map((s) => s.pid), ...extraPids];
    const each = pids.map((pid) => pssBytes(pid));
    return { total: each.reduce((a, b) => a + b, 0), perProcess: each };
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
}

export async function measureMemory(ctx) {
  const { hanactl, cleanup, counts } = ctx;
  const n = counts.memorySessions;
  // One set at a time: pages the two sets would share must not be split between them.
  const broker = await measureSet(n, (i) => openSession({ ...hanactl.shimCommand('bench'), cleanup, label: `shim ${i}` }), [
    hanactl.daemonPid,
  ]);
  const inproc = await measureSet(n, (i) => openSession({ ...ctx.inprocCommand(ctx.pgUrl), cleanup, label: `in-process server ${i}` }));
  const daemon = broker.perProcess.at(-1);
  return {
    sessions: n,
    hanactl: { totalBytes: broker.total, daemonBytes: daemon, shimBytesEach: (broker.total - daemon) / n },
    inproc: { totalBytes: inproc.total, serverBytesEach: inproc.total / n },
  };
}
