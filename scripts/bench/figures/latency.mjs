// Figure: run_query SELECT 1, one call at a time: hanactl (the relay editors start), the same
// session on the daemon's socket with no relay process (and one more on a connection with a cost
// guard, whose cheap plan passes it), hanactl on a connection whose rows are separated by a
// context value (the relay given MCP_CONTEXT_TENANT), the in-process server, DBHub and the floor.
import { floorClient } from '../lib/direct-clients.mjs';
import { openSession } from '../lib/mcp-session.mjs';
import { cpuMs } from '../lib/processes.mjs';
import { openSocketSession } from '../lib/socket-session.mjs';
import { interleave, timeCalls } from '../lib/stats.mjs';

export async function measureLatency(ctx) {
  const { counts, hanactl, cleanup } = ctx;
  const viaRelay = await openSession({ ...hanactl.shimCommand('bench'), cleanup, label: 'hanactl relay' });
  const relayed = hanactl.shimCommand('bench_separated');
  const separated = await openSession({
    ...relayed,
    env: { ...relayed.env, MCP_CONTEXT_TENANT: 'tenant-1' },
    cleanup,
    label: 'hanactl relay, rows separated',
  });
  const onSocket = await openSocketSession({ socketPath: hanactl.socket, connection: 'bench', cwd: hanactl.home, cleanup });
  const guarded = await openSocketSession({ socketPath: hanactl.socket, connection: 'bench_guarded', cwd: hanactl.home, cleanup });
  const inproc = await openSession({ ...ctx.inprocCommand(ctx.pgUrl), cleanup, label: 'in-process server' });
  const dbhub = await openSession({ ...ctx.dbhubCommand(ctx.pgUrl), cleanup, label: 'DBHub' });
  const floor = await floorClient(ctx.pgUrl, cleanup);
  const contenders = {
    hanactl: () => viaRelay.query('SELECT 1'),
    separated: () => separated.query('SELECT 1'),
    daemonSocket: () => onSocket.query('SELECT 1'),
    costGuard: () => guarded.query('SELECT 1'),
    inproc: () => inproc.query('SELECT 1'),
    dbhub: () => dbhub.query('SELECT 1'),
    floor: floor.plain,
  };
  for (const fn of Object.values(contenders)) await timeCalls(counts.warmup, fn);
  ctx.progress(`latency: ${counts.calls} calls each, in ${counts.rounds} interleaved rounds`);
  const perRound = Math.ceil(counts.calls / counts.rounds);
  const pids = { relay: viaRelay.pid, daemon: hanactl.daemonPid, inproc: inproc.pid, dbhub: dbhub.pid };
  const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const result = await interleave(contenders, { rounds: counts.rounds, perRound });
  const calls = perRound * counts.rounds;
  // CPU per call of each server process. The daemon served four sessions' calls (the plain
  // relay's, the socket session's, the guarded and the separated session's): what it used is
  // shared out over all of them.
  const daemonSessions = 4;
  const cpuPerCallMs = {
    relay: (cpuMs(pids.relay) - cpuBefore.relay) / calls,
    daemon: (cpuMs(pids.daemon) - cpuBefore.daemon) / (daemonSessions * calls),
    inproc: (cpuMs(pids.inproc) - cpuBefore.inproc) / calls,
    dbhub: (cpuMs(pids.dbhub) - cpuBefore.dbhub) / calls,
  };
  await viaRelay.close();
  await separated.close();
  await onSocket.close();
  await guarded.close();
  await inproc.close();
  await dbhub.close();
  return { ...result, cpuPerCallMs };
}
