// Figure: run_query SELECT 1, one call at a time, hanactl vs the in-process server vs the floor.
import { daemonApiClient, floorClient } from '../lib/direct-clients.mjs';
import { openSession } from '../lib/mcp-session.mjs';
import { cpuMs } from '../lib/processes.mjs';
import { interleave, timeCalls } from '../lib/stats.mjs';

export async function measureLatency(ctx) {
  const { counts, hanactl, cleanup } = ctx;
  const viaShim = await openSession({ ...hanactl.shimCommand('bench'), cleanup, label: 'hanactl shim' });
  const inproc = await openSession({ ...ctx.inprocCommand(ctx.pgUrl), cleanup, label: 'in-process server' });
  const floor = await floorClient(ctx.pgUrl, cleanup);
  const daemonApi = daemonApiClient(hanactl.socket, 'bench', cleanup);
  const contenders = {
    hanactl: () => viaShim.query('SELECT 1'),
    inproc: () => inproc.query('SELECT 1'),
    floor: floor.plain,
    floorAsDaemon: floor.asDaemon,
    daemonApi,
  };
  for (const fn of Object.values(contenders)) await timeCalls(counts.warmup, fn);
  ctx.progress(`latency: ${counts.calls} calls each, in ${counts.rounds} interleaved rounds`);
  const perRound = Math.ceil(counts.calls / counts.rounds);
  const pids = { shim: viaShim.pid, daemon: hanactl.daemonPid, inproc: inproc.pid };
  const cpuBefore = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
  const result = await interleave(contenders, { rounds: counts.rounds, perRound });
  const calls = perRound * counts.rounds;
  // CPU per call of each server process; the daemon served both the shim's calls and daemonApi's.
  const cpuPerCallMs = {
    shim: (cpuMs(pids.shim) - cpuBefore.shim) / calls,
    daemon: (cpuMs(pids.daemon) - cpuBefore.daemon) / (2 * calls),
    inproc: (cpuMs(pids.inproc) - cpuBefore.inproc) / calls,
  };
  await viaShim.close();
  await inproc.close();
  return { ...result, cpuPerCallMs };
}
