// Figure: S concurrent sessions × C calls — errors, peak server connections, latency —
// hanactl (every session through one daemon and its capped pool) vs S in-process servers.
import { samplePeak } from '../lib/databases.mjs';
import { openSession, openSessions } from '../lib/mcp-session.mjs';
import { since, summarise } from '../lib/stats.mjs';

/** Every session makes `calls` calls in sequence, all sessions at once. */
async function drive(sessions, calls, countConnections) {
  for (const s of sessions) await s.query('SELECT 1'); // each warm, as a long-lived session is
  const sampler = samplePeak(countConnections, 20);
  const latencies = [];
  let errors = 0;
  let firstError;
  const started = process.hrtime.bigint();
  await Promise.all(
    sessions.map(async (s) => {
      for (let i = 0; i < calls; i++) {
        const t = process.hrtime.bigint();
        try {
          await s.query('SELECT 1');
          latencies.push(since(t));
        } catch (err) {
          errors++;
          firstError ??= err.message;
        }
      }
    }),
  );
  const wallMs = since(started);
  const { peak, samples } = await sampler.stop();
  return {
    ...summarise(latencies),
    errors,
    ...(firstError ? { firstError } : {}),
    peakConnections: peak,
    connectionSamples: samples,
    wallMs,
  };
}

/**
 * `connection` is the name registered in the bench daemon, `url` the same target for the in-process servers;
 * `count.hanactl` / `count.inproc` count each contender's server connections.
 */
export async function measureConcurrency(ctx, { connection, url, count }) {
  const { hanactl, cleanup, counts } = ctx;
  const { sessions: n, calls } = counts.concurrency;
  const run = async (open, countConnections) => {
    const t = process.hrtime.bigint();
    const sessions = await openSessions(n, 5, open);
    ctx.progress(`    ${n} sessions open in ${(since(t) / 1000).toFixed(1)} s`);
    try {
      return await drive(sessions, calls, countConnections);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  };
  ctx.progress(`  hanactl: ${n} relays -> one daemon`);
  const viaBroker = await run((i) => openSession({ ...hanactl.shimCommand(connection), cleanup, label: `relay ${i}` }), count.hanactl);
  ctx.progress(`  in-process: ${n} servers, a pool each`);
  const inproc = await run((i) => openSession({ ...ctx.inprocCommand(url), cleanup, label: `in-process server ${i}` }), count.inproc);
  return { sessions: n, calls, poolCap: ctx.poolMax, hanactl: viaBroker, inproc };
}
