// Figure: memory of 10 sessions — summed PSS of 10 relays + the daemon, against 10 in-process
// servers and 10 DBHub servers; and hanactl's again after `churnSessions` more sessions came and went.
import { openSession, openSessions } from '../lib/mcp-session.mjs';
import { pssBytes } from '../lib/processes.mjs';
import { openSocketSession } from '../lib/socket-session.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Opens `count` sessions, runs a few calls on each (a warm connection), sums their PSS, closes them. */
async function measureSet(count, open, extraPids = []) {
  const sessions = await openSessions(count, 5, open);
  try {
    for (const s of sessions) for (let i = 0; i < 3; i++) await s.query('SELECT 1');
    await sleep(300); // let start-up garbage settle the same way for every set
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
  const relays = (i) => openSession({ ...hanactl.shimCommand('bench'), cleanup, label: `relay ${i}` });
  // One set at a time: pages the sets would share must not be split between them.
  const broker = await measureSet(n, relays, [hanactl.daemonPid]);
  // Sessions come and go as editors open and close: each one opens, calls once and closes.
  ctx.progress(`memory: ${counts.churnSessions} sessions come and go`);
  for (let i = 0; i < counts.churnSessions; i++) {
    const s = await openSocketSession({ socketPath: hanactl.socket, connection: 'bench', cwd: hanactl.home, cleanup });
    await s.query('SELECT 1');
    await s.close();
  }
  const afterChurn = await measureSet(n, relays, [hanactl.daemonPid]);
  const inproc = await measureSet(n, (i) => openSession({ ...ctx.inprocCommand(ctx.pgUrl), cleanup, label: `in-process server ${i}` }));
  const dbhub = await measureSet(n, (i) => openSession({ ...ctx.dbhubCommand(ctx.pgUrl), cleanup, label: `DBHub ${i}` }));
  const view = (set) => {
    const daemon = set.perProcess.at(-1);
    return { totalBytes: set.total, daemonBytes: daemon, relayBytesEach: (set.total - daemon) / n };
  };
  return {
    sessions: n,
    churnSessions: counts.churnSessions,
    hanactl: view(broker),
    hanactlAfterChurn: view(afterChurn),
    inproc: { totalBytes: inproc.total, serverBytesEach: inproc.total / n },
    dbhub: { totalBytes: dbhub.total, serverBytesEach: dbhub.total / n },
  };
}
