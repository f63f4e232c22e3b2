// Figure: `SELECT * FROM` a 1,000,000-row table with maxRows 100 — latency, and how much the
// daemon's resident memory grows (a broker that buffered the result would grow by ~100 MB).
import { createBigTable } from '../lib/databases.mjs';
import { openSession } from '../lib/mcp-session.mjs';
import { rssBytes } from '../lib/processes.mjs';
import { summarise, timeCalls } from '../lib/stats.mjs';

export async function measureBigTable(ctx) {
  const { hanactl, cleanup, counts } = ctx;
  const table = `hanactl_bench_rows_${process.pid}`;
  ctx.progress(`  creating ${counts.bigTableRows.toLocaleString('en')} rows in ${table}`);
  await createBigTable(ctx.pgAdmin, table, counts.bigTableRows, cleanup);
  const session = await openSession({ ...hanactl.shimCommand('bench'), cleanup, label: 'hanactl relay' });
  try {
    const sql = `SELECT * FROM ${table}`;
    const check = await session.query(sql, { maxRows: 100 });
    const { rowCount, truncated } = check.structuredContent ?? {};
    if (rowCount !== 100 || truncated !== true) throw new Error(`expected 100 rows, truncated; got ${rowCount}, ${truncated}`);
    const before = rssBytes(hanactl.daemonPid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes(hanactl.daemonPid));
    }, 5);
    let samples;
    try {
      samples = await timeCalls(counts.bigTableCalls, () => session.query(sql, { maxRows: 100 }));
    } finally {
      clearInterval(sampler);
    }
    const after = rssBytes(hanactl.daemonPid);
    peak = Math.max(peak, after);
    return { rows: counts.bigTableRows, ...summarise(samples), rssBeforeBytes: before, rssPeakBytes: peak, rssGrowthBytes: peak - before };
  } finally {
    await session.close();
  }
}
