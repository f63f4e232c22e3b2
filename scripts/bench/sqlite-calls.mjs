#!/usr/bin/env node
// SQLite memory after many calls: `node scripts/bench/sqlite-calls.mjs [--calls 100000] [--sessions 4]`.
// A private daemon with default pool settings serves `--sessions` clients that call at once on
// one small SQLite file through the daemon's API; the summed PSS of the daemon and every process
// it started (its SQLite hosts) is read at rest after 1,000 calls and again after `--calls`.
// Prints one JSON line. Build first (`npm run build`). Everything it starts is removed.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { benchSqliteFile } from './figures/sqlite-memory.mjs';
import { startBenchHanactl } from './lib/bench-env.mjs';
import { Cleanup } from './lib/processes.mjs';
import { treePssBytes } from './lib/process-tree.mjs';

const { values } = parseArgs({ options: { calls: { type: 'string', default: '100000' }, sessions: { type: 'string', default: '4' } } });
const total = Number(values.calls);
const sessions = Number(values.sessions);
if (!Number.isInteger(total) || total < 1000 || !Number.isInteger(sessions) || sessions < 1) {
  console.error('usage: node scripts/bench/sqlite-calls.mjs [--calls N (>= 1000)] [--sessions N]');
  process.exit(2);
}
const repo = resolve(import.meta.dirname, '../..');
const { DaemonClient } = await import(resolve(repo, 'dist/shared/daemon-client.js'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cleanup = new Cleanup();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => void cleanup.run().finally(() => process.exit(130)));

/** PSS at rest once two readings 500 ms apart differ by less than 256 KiB (at most 15 s). */
async function settled(pid) {
  let last = treePssBytes(pid);
  for (const deadline = Date.now() + 15_000; Date.now() < deadline; ) {
    await sleep(500);
    const next = treePssBytes(pid);
    const done = Math.abs(next.bytes - last.bytes) < 256 * 1024;
    last = next;
    if (done) break;
  }
  return {
    mb: Number((last.bytes / 2 ** 20).toFixed(1)),
    processes: last.processes,
    hostsMb: last.each.slice(1).map((b) => Number((b / 2 ** 20).toFixed(1))),
  };
}

try {
  const hanactl = await startBenchHanactl({ repo, poolMax: undefined, cleanup });
  const file = benchSqliteFile(repo, cleanup);
  await hanactl.add('lite', `sqlite:${file}`);
  const clients = Array.from({ length: sessions }, () => new DaemonClient({ socketPath: hanactl.socket, clientName: 'hanactl' }));
  let done = 0;
  const runUntil = (target) =>
    Promise.all(
      clients.map(async (client) => {
        while (done < target) {
          done++;
          await client.query({ connection: 'lite', sql: 'SELECT count(*) AS n, max(name) AS m FROM t' });
        }
      }),
    );
  const started = Date.now();
  await runUntil(1000);
  const after1k = await settled(hanactl.daemonPid);
  process.stderr.write(`sqlite-calls: 1,000 calls: ${JSON.stringify(after1k)}\n`);
  await runUntil(total);
  const afterAll = await settled(hanactl.daemonPid);
  const result = { sessions, calls: done, seconds: Math.round((Date.now() - started) / 1000), after1k, [`after${total}`]: afterAll };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  await cleanup.run();
}
