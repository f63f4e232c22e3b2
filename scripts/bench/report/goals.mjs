// The results table: each figure as measured, its ratio, the goal and whether it holds.
// A figure that could not be measured is listed anyway, with why.

const ms = (v) => (v >= 100 ? `${v.toFixed(0)} ms` : v >= 10 ? `${v.toFixed(1)} ms` : `${v.toFixed(3)} ms`);
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
const x = (v) => `${v.toFixed(2)}×`;

/** `{figure, measured, ratio, goal, holds}`; holds is 'yes' | 'no' | '—' (no goal) | 'not run'. */
function row(figure, goal, compute) {
  try {
    const { measured, ratio = '—', holds } = compute();
    return { figure, measured, ratio, goal, holds: holds === undefined ? '—' : holds ? 'yes' : 'no' };
  } catch (err) {
    return { figure, measured: `not measured: ${err.message}`, ratio: '—', goal, holds: 'not run' };
  }
}

/** Reads a figure, or throws its recorded error so the row says why it is missing. */
function need(figures, key) {
  const f = figures[key];
  if (!f) throw new Error('not selected (--only)');
  if (f.skipped) throw new Error(`skipped: ${f.skipped}`);
  if (f.error) throw new Error(f.error);
  return f;
}

export function goalRows(results) {
  const f = results.figures;
  const c = results.counts;
  return [
    row(`\`run_query SELECT 1\`, ${c.calls} sequential calls after ${c.warmup} warm-up`, '≤ 1.3× in-process server at p50', () => {
      const { hanactl, inproc } = need(f, 'latency');
      const r = hanactl.p50 / inproc.p50;
      return {
        measured: `hanactl p50 ${ms(hanactl.p50)}, p99 ${ms(hanactl.p99)}; in-process p50 ${ms(inproc.p50)}, p99 ${ms(inproc.p99)}`,
        ratio: `${x(r)} in-process (p99 ${x(hanactl.p99 / inproc.p99)})`,
        holds: r <= 1.3,
      };
    }),
    row('same vs DBHub (`@bytebase/dbhub`, `execute_sql`), same database, same rounds', 'hanactl p50 ≤ DBHub’s', () => {
      const { hanactl, dbhub } = need(f, 'latency');
      if (!dbhub) throw new Error('DBHub was not in this run');
      const r = hanactl.p50 / dbhub.p50;
      return {
        measured: `DBHub p50 ${ms(dbhub.p50)}, p99 ${ms(dbhub.p99)}`,
        ratio: `${x(r)} DBHub (p99 ${x(hanactl.p99 / dbhub.p99)})`,
        holds: r <= 1,
      };
    }),
    row(`same vs spawn per call (${c.spawnCalls} calls)`, 'hanactl ≥ 200× faster at p50', () => {
      const { hanactl } = need(f, 'latency');
      const spawn = need(f, 'spawnPerCall');
      const r = spawn.p50 / hanactl.p50;
      return {
        measured: `spawn per call p50 ${ms(spawn.p50)}, p99 ${ms(spawn.p99)}`,
        ratio: `hanactl ${r.toFixed(0)}× faster`,
        holds: r >= 200,
      };
    }),
    row('broker overhead: hanactl − in-process server, p50', '≤ 0.2 ms', () => {
      const { hanactl, inproc } = need(f, 'latency');
      const d = hanactl.p50 - inproc.p50;
      return { measured: ms(d), ratio: `${x(d / 0.2)} goal`, holds: d <= 0.2 };
    }),
    row('cost guard on, cheap plan (PostgreSQL `EXPLAIN` before `SELECT 1`): adds, at p50', '≤ 0.2 ms', () => {
      const { costGuard, daemonSocket } = need(f, 'latency');
      if (!costGuard) throw new Error('the guarded session was not in this run');
      const d = costGuard.p50 - daemonSocket.p50;
      return {
        measured: `adds ${ms(d)} at p50 (guarded p50 ${ms(costGuard.p50)}, p99 ${ms(costGuard.p99)}; unguarded p50 ${ms(daemonSocket.p50)}, same socket, same rounds)`,
        ratio: `${x(d / 0.2)} goal`,
        holds: d <= 0.2,
      };
    }),
    row('`run_query SELECT 1` with a context value (rows separated), PostgreSQL: adds, beside the plain call', '— (reported)', () => {
      const { separated, hanactl } = need(f, 'latency');
      if (!separated) throw new Error('the separated session was not in this run');
      return {
        measured: `adds ${ms(separated.p50 - hanactl.p50)} at p50, ${ms(separated.p99 - hanactl.p99)} at p99 (separated p50 ${ms(separated.p50)}, p99 ${ms(separated.p99)}; plain p50 ${ms(hanactl.p50)}, p99 ${ms(hanactl.p99)}; both through the relay, same rounds)`,
        ratio: `${x(separated.p50 / hanactl.p50)} plain (p99 ${x(separated.p99 / hanactl.p99)})`,
      };
    }),
    row(
      `relay cold start: spawn → \`tools/list\` answered, \`bin/hanactl-mcp\`, median of ${c.coldStarts}`,
      '≤ 0.3× bare SDK server',
      () => {
        const cs = need(f, 'coldStart');
        const r = cs.relay.median / cs.bare.median;
        return {
          measured: `${ms(cs.relay.median)} (the relay bundle through bin/hanactl-mcp); bare server ${ms(cs.bare.median)}`,
          ratio: `${x(r)} bare`,
          holds: r <= 0.3,
        };
      },
    ),
    row('relay cold start, `node dist/shim.cjs mcp`', '— (reported)', () => {
      const cs = need(f, 'coldStart');
      return { measured: ms(cs.bundle.median), ratio: `${x(cs.bundle.median / cs.bare.median)} bare` };
    }),
    row('relay cold start, full CLI `node bin/hanactl.js mcp`', '— (reported)', () => {
      const cs = need(f, 'coldStart');
      return { measured: ms(cs.fullCli.median), ratio: `${x(cs.fullCli.median / cs.bare.median)} bare` };
    }),
    row('DBHub cold start (its PostgreSQL connection included)', '— (reported)', () => {
      const cs = need(f, 'coldStart');
      if (!cs.dbhub) throw new Error('DBHub was not in this run');
      return {
        measured: `${ms(cs.dbhub.median)}`,
        ratio: `${x(cs.dbhub.median / cs.bare.median)} bare; hanactl ${x(cs.relay.median / cs.dbhub.median)} DBHub`,
      };
    }),
    row(`memory of ${c.memorySessions} sessions: summed PSS`, '≤ 0.4× in-process servers', () => {
      const m = need(f, 'memory');
      const r = m.hanactl.totalBytes / m.inproc.totalBytes;
      return {
        measured: `hanactl ${mb(m.hanactl.totalBytes)} (daemon ${mb(m.hanactl.daemonBytes)} + ${mb(m.hanactl.relayBytesEach)}/relay); in-process ${mb(m.inproc.totalBytes)} (${mb(m.inproc.serverBytesEach)}/server)`,
        ratio: `${x(r)} in-process`,
        holds: r <= 0.4,
      };
    }),
    row(`same after ${c.churnSessions} more sessions came and went`, '≤ 0.4× in-process servers', () => {
      const m = need(f, 'memory');
      const r = m.hanactlAfterChurn.totalBytes / m.inproc.totalBytes;
      return {
        measured: `hanactl ${mb(m.hanactlAfterChurn.totalBytes)} (daemon ${mb(m.hanactlAfterChurn.daemonBytes)}, was ${mb(m.hanactl.daemonBytes)})`,
        ratio: `${x(r)} in-process`,
        holds: r <= 0.4,
      };
    }),
    row(`memory of ${c.memorySessions} DBHub sessions: summed PSS`, '— (reported)', () => {
      const m = need(f, 'memory');
      return {
        measured: `DBHub ${mb(m.dbhub.totalBytes)} (${mb(m.dbhub.serverBytesEach)}/server)`,
        ratio: `hanactl ${x(m.hanactl.totalBytes / m.dbhub.totalBytes)} DBHub`,
      };
    }),
    row(`memory of ${c.memorySessions} sessions on one SQLite file: summed PSS`, '≤ 0.4× in-process servers', () => {
      const m = need(f, 'sqliteMemory');
      const r = m.hanactl.totalBytes / m.inproc.totalBytes;
      return {
        measured: `hanactl ${mb(m.hanactl.totalBytes)} (daemon + ${m.hanactl.hosts} SQLite hosts ${mb(m.hanactl.daemonAndHostsBytes)}, ${mb(m.hanactl.hostBytesEach)}/host; ${mb(m.hanactl.relayBytesEach)}/relay); in-process ${mb(m.inproc.totalBytes)} (${mb(m.inproc.serverBytesEach)}/server)`,
        ratio: `${x(r)} in-process (daemon + hosts alone ${x(m.daemonAndHostsRatio)})`,
        holds: r <= 0.4,
      };
    }),
    ...loadRows(f, c, 'concurrencyPg', 'PostgreSQL', true),
    ...loadRows(f, c, 'concurrencyMaria', 'MariaDB', false),
    row(
      `\`SELECT * FROM\` a ${c.bigTableRows.toLocaleString('en')}-row table, maxRows 100, median of ${c.bigTableCalls}`,
      '≤ 50 ms',
      () => {
        const b = need(f, 'bigTable');
        return { measured: `${ms(b.p50)} (max ${ms(b.max)})`, ratio: `${x(b.p50 / 50)} goal`, holds: b.p50 <= 50 };
      },
    ),
    row('same: daemon RSS growth (VmRSS peak − before)', '≤ 10 MB', () => {
      const b = need(f, 'bigTable');
      return {
        measured: `${mb(b.rssGrowthBytes)} (${mb(b.rssBeforeBytes)} → peak ${mb(b.rssPeakBytes)})`,
        ratio: `${x(b.rssGrowthBytes / (10 * 2 ** 20))} goal`,
        holds: b.rssGrowthBytes <= 10 * 2 ** 20,
      };
    }),
    row('`tools/list` JSON size', '≤ 8 KB', () => {
      const t = need(f, 'toolsList');
      const largest = t.largest.map((l) => `${l.name} ${l.bytes.toLocaleString('en')}`).join(', ');
      return {
        measured: `${t.bytes.toLocaleString('en')} bytes, ${t.tools} tools (largest: ${largest})`,
        ratio: `${x(t.bytes / 8192)} goal`,
        holds: t.bytes <= 8192,
      };
    }),
  ];
}

/** The rows of one concurrency figure; the p99 goal applies to PostgreSQL only. */
function loadRows(f, c, key, engine, p99Goal) {
  const label = `${c.concurrency.sessions} concurrent sessions × ${c.concurrency.calls} calls, ${engine}`;
  return [
    row(`${label}: errors`, '0 errors', () => {
      const r = need(f, key);
      return { measured: `hanactl ${r.hanactl.errors}; in-process ${r.inproc.errors}`, holds: r.hanactl.errors === 0 };
    }),
    row(`${label}: peak server connections`, `≤ pool cap (${c.poolMax})`, () => {
      const r = need(f, key);
      return {
        measured: `hanactl ${r.hanactl.peakConnections}; in-process ${r.inproc.peakConnections} (${r.hanactl.connectionSamples} + ${r.inproc.connectionSamples} samples)`,
        ratio: `${x(r.hanactl.peakConnections / r.poolCap)} cap`,
        holds: r.hanactl.peakConnections <= r.poolCap,
      };
    }),
    row(`${label}: p99 latency`, p99Goal ? '≤ ⅓ of in-process servers’ p99' : '— (reported)', () => {
      const r = need(f, key);
      const ratio = r.hanactl.p99 / r.inproc.p99;
      return {
        measured: `hanactl p50 ${ms(r.hanactl.p50)}, p99 ${ms(r.hanactl.p99)}; in-process p50 ${ms(r.inproc.p50)}, p99 ${ms(r.inproc.p99)}`,
        ratio: `${x(ratio)} in-process`,
        ...(p99Goal ? { holds: ratio <= 1 / 3 } : {}),
      };
    }),
  ];
}
