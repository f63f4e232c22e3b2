import { existsSync, readFileSync } from 'node:fs';
// bench/RESULTS.md: the goals table first, then where hanactl's time goes, then how it was measured.

const ms = (v) => (Number.isFinite(v) ? `${v.toFixed(3)} ms` : '—');
const cell = (s) => String(s).replace(/\|/g, '\\|');

function machineLine(m) {
  return [
    m.date,
    `${m.cpus} × ${m.cpuModel}`,
    `${m.memoryGiB} GiB`,
    `${m.os}`,
    `Node ${m.node}`,
    `PostgreSQL ${m.postgres ?? 'unreachable'}`,
    `MariaDB ${m.mariadb ?? 'unreachable'}`,
    `hanactl ${m.hanactl}`,
    `MCP SDK ${m.mcpSdk}`,
    `pg ${m.pg}`,
    `DBHub ${m.dbhub ?? 'not installed'}`,
    `mysql2 ${m.mysql2}`,
  ].join(' · ');
}

/** Where a sequential call's time goes, from the latency figure's extra contenders. */
function breakdown(latency) {
  if (!latency || latency.error) return '';
  const { floor, daemonSocket, inproc, hanactl, dbhub, separated } = latency;
  const rows = [
    ['floor: `SELECT 1` on a warm `pg` client', floor, floor.p50],
    [
      '+ the daemon: MCP session on its socket (no relay process), tool, policy, pool, the safety statements in one pipelined round trip',
      daemonSocket,
      daemonSocket.p50 - floor.p50,
    ],
    ['+ the relay process: stdio ⇄ socket, bytes copied (= hanactl)', hanactl, hanactl.p50 - daemonSocket.p50],
    ...(separated
      ? [
          [
            '+ rows separated by a context value (relay given `MCP_CONTEXT_TENANT`): role reset to the login, `row_security = on`, role checked before and after, value set and read back, in the same round trip',
            separated,
            separated.p50 - hanactl.p50,
          ],
        ]
      : []),
    ['for comparison, in-process MCP server (MCP over stdio + `pool.query`)', inproc, inproc.p50 - floor.p50],
    ...(dbhub ? [['for comparison, DBHub (MCP over stdio, `execute_sql`)', dbhub, dbhub.p50 - floor.p50]] : []),
  ];
  const cpu = latency.cpuPerCallMs;
  const cpuLine = cpu
    ? `\nCPU time per call (\`/proc/<pid>/stat\`, 10 ms ticks): relay ${ms(cpu.relay)} + daemon ${ms(cpu.daemon)} = ${ms(cpu.relay + cpu.daemon)} for hanactl (the daemon's time shared out over the calls of every session it served: plain, guarded and separated); in-process server ${ms(cpu.inproc)}${cpu.dbhub !== undefined ? `; DBHub ${ms(cpu.dbhub)}` : ''}.\n`
    : '';
  return `## Where a hanactl call's time goes

Sequential \`SELECT 1\`, the same interleaved rounds as the first figure; "adds" is the p50 difference from the row above (the comparison rows: from the floor).
${cpuLine}
| step | p50 | p99 | adds at p50 |
|---|---|---|---|
${rows.map(([label, s, add]) => `| ${label} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(add)} |`).join('\n')}
`;
}

/** The hand-written analysis (bench/ANALYSIS.md), kept beside the measured table. */
function analysis() {
  const file = new URL('../../../bench/ANALYSIS.md', import.meta.url);
  return existsSync(file) ? `\n${readFileSync(file, 'utf8').trim()}\n` : '';
}

export function renderMarkdown(results, rows) {
  const m = results.machine;
  const c = results.counts;
  const quick = results.quick
    ? '\n> **Quick run** (`--quick`): small counts for a smoke test. These numbers are not the ones to quote; run `npm run bench` on a quiet machine.\n'
    : '';
  const failures = Object.entries(results.figures).filter(([, v]) => v?.error || v?.skipped);
  return `# Benchmark results
${quick}
${machineLine(m)}

Load average at start ${m.loadStart.join(' / ')}, at end ${m.loadEnd.join(' / ')} (1 / 5 / 15 min). Run took ${(results.durationMs / 1000).toFixed(1)} s.
Regenerate with \`npm run bench\` (\`-- --quick\` for a smoke run, \`-- --out DIR\` to write elsewhere).

| figure | measured | ratio | goal | holds |
|---|---|---|---|---|
${rows.map((r) => `| ${cell(r.figure)} | ${cell(r.measured)} | ${cell(r.ratio)} | ${cell(r.goal)} | ${r.holds} |`).join('\n')}

![latency figures](latency.svg)

${breakdown(results.figures.latency)}
## Contenders (all in the same run, loopback)

- **hanactl**: the SDK \`Client\` over stdio → \`bin/hanactl-mcp --connection bench\` (the editors' start command: a byte relay) → the session's MCP server in the daemon, on its Unix socket → a warm pool (cap ${c.poolMax}, \`config.json\` \`pool.max\`).
- **daemon socket, no relay**: the same session opened by the benchmark straight on the daemon's socket (the relay's hello line, then newline-delimited JSON-RPC): what the relay process adds is the difference.
- **DBHub** (\`@bytebase/dbhub\` ${m.dbhub ?? '(not installed)'}, the newest line that runs on Node 20): one process per session over stdio, \`--dsn\` on the same database, its \`execute_sql\` tool, default settings.
- **in-process server**: \`scripts/bench/inproc-server.mjs\`, a baseline written for this benchmark — one MCP stdio server per session with its own \`pg\` (or \`mysql2\`) pool in the same process, one \`run_query\` tool with hanactl's input and output schemas, no read-only transaction, warm before it answers.
- **spawn per call**: each call spawns \`node scripts/bench/spawn-query.mjs\`, which loads \`pg\`, connects, queries, prints and exits — a lower bound on a per-call CLI such as hana-cli.
- **floor**: the same query on a warm \`pg\` client in the benchmark's process, no MCP.

## Method

- Timings are taken in the benchmark process with \`process.hrtime\`; p50/p99 are nearest-rank. Sequential contenders run in ${c.rounds} interleaved rounds so background load hits them alike; each had ${c.warmup} warm-up calls.
- Rows separated: the connection \`bench_separated\`, the same database and login registered with \`--context TENANT\`, through the relay started with \`MCP_CONTEXT_TENANT\`. Round trips between the daemon and PostgreSQL per call, for it, a plain and a guarded connection: \`node scripts/bench/call-round-trips.mjs\` (a counting TCP relay in front of the server).
- Cold start: spawn → \`initialize\` → \`tools/list\` answered, the daemon already running; contenders take turns each round after one discarded round.
- Memory: PSS from \`/proc/<pid>/smaps_rollup\`, each set measured alone after 3 calls per session (hanactl's sum includes the daemon); between hanactl's two sets ${c.churnSessions ?? 0} sessions open on the daemon's socket, call once and close, one after another.
- Concurrency: ${c.concurrency.sessions} sessions started ${5} at a time, one warm-up call each, then all make ${c.concurrency.calls} calls at once; server connections are sampled every 20 ms (PostgreSQL: \`pg_stat_activity\` by the contender's \`application_name\`; MariaDB: \`information_schema.PROCESSLIST\` for the user in a database private to the run).
- Large result: an UNLOGGED table of ${c.bigTableRows.toLocaleString('en')} rows made for the run and dropped after; daemon VmRSS from \`/proc/<pid>/status\` sampled every 5 ms.
${analysis()}${failures.length > 0 ? `\n## Figures that could not be measured\n\n${failures.map(([k, v]) => `- ${k}: ${v.skipped ? `skipped: ${cell(v.skipped)}` : cell(v.error)}`).join('\n')}\n` : ''}`;
}
