#!/usr/bin/env node
// Benchmarks, side by side in one run: `npm run bench` (`-- --quick` for a smoke run,
// `-- --out DIR` to write elsewhere). hanactl against the designs it replaces — an in-process
// MCP server per session, a process spawned per call —, a published TypeScript peer (DBHub) and
// the floor, on loopback PostgreSQL (and MariaDB for the pool figures). Writes RESULTS.md, results.json and latency.svg;
// progress goes to stderr. Exits 1 when a figure could not be measured (a missed goal is a
// result, not a failure; an unreachable MariaDB skips its figure and says so). Every process, table, database and folder it makes is removed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { measureBigTable } from './figures/big-table.mjs';
import { measureColdStart } from './figures/cold-start.mjs';
import { measureConcurrency } from './figures/concurrency.mjs';
import { measureLatency } from './figures/latency.mjs';
import { measureMemory } from './figures/memory.mjs';
import { measureSpawnPerCall } from './figures/spawn-per-call.mjs';
import { measureSqliteMemory } from './figures/sqlite-memory.mjs';
import { measureToolsList } from './figures/tools-list.mjs';
import { startBenchHanactl } from './lib/bench-env.mjs';
import { mysqlAdmin, pgAdmin } from './lib/databases.mjs';
import { dbhubCommand, dbhubVersion } from './lib/dbhub.mjs';
import { describeMachine, load } from './lib/machine.mjs';
import { parseOptions } from './lib/options.mjs';
import { Cleanup } from './lib/processes.mjs';
import { since } from './lib/stats.mjs';
import { goalRows } from './report/goals.mjs';
import { renderMarkdown } from './report/markdown.mjs';
import { latencySeries, renderLatencySvg } from './report/svg.mjs';

const repo = resolve(import.meta.dirname, '../..');
const progress = (text) => process.stderr.write(`bench: ${text}\n`);

let options;
try {
  options = parseOptions(process.argv.slice(2), repo);
} catch (err) {
  process.stderr.write(`bench: ${err.message}\n`);
  process.exit(2);
}

const cleanup = new Cleanup();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    interrupted = true;
    progress(`${signal}: cleaning up`);
    void cleanup.run().finally(() => process.exit(130));
  });
}

const started = process.hrtime.bigint();
const machine = describeMachine(repo);
const results = { quick: options.quick, counts: options.counts, machine, figures: {} };
const tag = `${process.pid}`;

/** Thrown by a figure that cannot run here for a reason outside hanactl (an engine that is not installed). */
class SkipFigure extends Error {}

/** Runs one figure unless --only leaves it out; a failure is recorded and the run goes on. */
async function figure(key, title, measure) {
  if (!options.only.has(key) || interrupted) return;
  const t = process.hrtime.bigint();
  progress(`${title}`);
  try {
    results.figures[key] = await measure();
    progress(`  done in ${(since(t) / 1000).toFixed(1)} s`);
  } catch (err) {
    const skipped = err instanceof SkipFigure;
    results.figures[key] = skipped ? { skipped: err.message } : { error: err.message };
    progress(`  ${skipped ? 'SKIPPED' : 'FAILED'}: ${err.message}`);
  }
}

try {
  progress(`${options.quick ? 'quick run' : 'full run'}; output to ${options.outDir}`);
  const pg = await pgAdmin(options.pgUrl, cleanup).catch((err) => {
    throw new Error(`PostgreSQL is not reachable at ${options.pgUrl}: ${err.message}`);
  });
  machine.postgres = await pg.version();
  machine.dbhub = dbhubVersion(repo);
  const maria = await mysqlAdmin(
    options.mysqlUrl,
    { hanactl: `hanactl_bench_${tag}`, inproc: `hanactl_bench_inproc_${tag}` },
    cleanup,
  ).catch((err) => ({ error: err.message }));
  if (!maria.error) machine.mariadb = await maria.version();

  progress('starting a private hanactl daemon');
  const hanactl = await startBenchHanactl({ repo, poolMax: options.counts.poolMax, cleanup });
  // A private application_name tells this run's connections apart from anyone else's.
  const brokerApp = `hanactl-bench-${tag}`;
  const inprocApp = `hanactl-bench-inproc-${tag}`;
  const pgUrl = new URL(options.pgUrl);
  pgUrl.searchParams.set('application_name', brokerApp);
  await hanactl.add('bench', pgUrl.toString());
  // The same database under a cost guard whose limit a cheap plan stays well within.
  await hanactl.add('bench_guarded', pgUrl.toString());
  await hanactl.cli('set', 'bench_guarded', '--max-cost', '1000');
  // The same database with rows separated by a context value (`--context`): every call also runs
  // as the login, checked before and after the statement, and sets and reads back the value.
  // Its own application_name keeps its pool out of the concurrency figure's connection count.
  const separatedUrl = new URL(options.pgUrl);
  separatedUrl.searchParams.set('application_name', `hanactl-bench-separated-${tag}`);
  await hanactl.cli('add', 'bench_separated', separatedUrl.toString(), '--no-password', '--context', 'TENANT');
  if (!maria.error) await hanactl.add('maria', maria.databases.hanactl.url);

  const ctx = {
    repo,
    counts: options.counts,
    poolMax: options.counts.poolMax,
    cleanup,
    progress,
    hanactl,
    pgUrl: options.pgUrl,
    pgAdmin: pg,
    inprocCommand: (url) => ({
      command: process.execPath,
      args: [join(repo, 'scripts/bench/inproc-server.mjs'), '--url', url, '--app-name', inprocApp],
      env: process.env,
    }),
    dbhubCommand: (url) => dbhubCommand(repo, url),
  };
  const c = options.counts;
  await figure('toolsList', 'tools/list size', () => measureToolsList(ctx));
  await figure('latency', `run_query SELECT 1: hanactl, in-process server, DBHub, floor (${c.calls} calls each)`, () =>
    measureLatency(ctx),
  );
  await figure('spawnPerCall', `spawn per call (${c.spawnCalls} calls)`, () => measureSpawnPerCall(ctx));
  await figure('bigTable', `SELECT * FROM ${c.bigTableRows.toLocaleString('en')} rows, maxRows 100`, () => measureBigTable(ctx));
  await figure('coldStart', `cold start, ${c.coldStarts} rounds of 5 contenders`, () => measureColdStart(ctx));
  await figure('memory', `memory of ${c.memorySessions} sessions`, () => measureMemory(ctx));
  await figure('sqliteMemory', `memory of ${c.memorySessions} sessions on one SQLite file`, () => measureSqliteMemory(ctx));
  await figure('concurrencyPg', `${c.concurrency.sessions} sessions × ${c.concurrency.calls} calls, PostgreSQL`, () =>
    measureConcurrency(ctx, {
      connection: 'bench',
      url: options.pgUrl,
      count: { hanactl: () => pg.count(brokerApp), inproc: () => pg.count(inprocApp) },
    }),
  );
  await figure('concurrencyMaria', `${c.concurrency.sessions} sessions × ${c.concurrency.calls} calls, MariaDB`, async () => {
    if (maria.error) throw new SkipFigure(`MariaDB is not reachable at ${options.mysqlUrl}: ${maria.error}`);
    const { hanactl: viaBroker, inproc } = maria.databases;
    return measureConcurrency(ctx, { connection: 'maria', url: inproc.url, count: { hanactl: viaBroker.count, inproc: inproc.count } });
  });
} catch (err) {
  progress(`FAILED: ${err.message}`);
  await cleanup.run();
  process.exit(1);
}

progress('cleaning up');
await cleanup.run();
machine.loadEnd = load();
results.durationMs = since(started);

const rows = goalRows(results);
results.goals = rows;
mkdirSync(options.outDir, { recursive: true });
const md = renderMarkdown(results, rows);
writeFileSync(join(options.outDir, 'RESULTS.md'), md);
writeFileSync(join(options.outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
const subtitle = `${machine.date.slice(0, 10)} · ${machine.cpus} × ${machine.cpuModel} · Node ${machine.node}${options.quick ? ' · QUICK RUN (small counts)' : ''}`;
writeFileSync(join(options.outDir, 'latency.svg'), renderLatencySvg(latencySeries(results), { subtitle }));
process.stdout.write(md);
progress(`wrote RESULTS.md, results.json and latency.svg to ${options.outDir} in ${(results.durationMs / 1000).toFixed(1)} s`);
const failed = Object.values(results.figures).some((f) => f?.error);
process.exit(failed ? 1 : 0);
