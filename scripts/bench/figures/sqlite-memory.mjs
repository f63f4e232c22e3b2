// Figure: memory of 10 sessions on one SQLite file — the relays, the daemon and every SQLite host
// it starts (summed PSS) against 10 in-process MCP servers that each open the file with
// better-sqlite3. The sessions call at once, so the daemon starts as many hosts as its pool
// allows, not one. It runs on a daemon of its own with the default pool settings (the run's
// shared daemon is configured for the PostgreSQL figures), stopped when the figure is done.
import { createRequire } from 'node:module';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchHanactl } from '../lib/bench-env.mjs';
import { openSession, openSessions } from '../lib/mcp-session.mjs';
import { pssBytes } from '../lib/processes.mjs';
import { treePssBytes } from '../lib/process-tree.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SQL = 'SELECT count(*) AS n, max(name) AS m FROM t';

/** A small SQLite file for the run, removed by the cleanup. */
export function benchSqliteFile(repo, cleanup) {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-bench-sqlite-'));
  cleanup.add('remove the bench SQLite file', () => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'bench.db');
  const Database = createRequire(join(repo, 'package.json'))('better-sqlite3-multiple-ciphers');
  const db = new Database(file);
  db.exec(
    "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 1000) INSERT INTO t (name) SELECT 'name ' || i FROM c;",
  );
  db.close();
  return file;
}

async function measureSet(count, open, measureExtra) {
  const sessions = await openSessions(count, 5, open);
  try {
    for (let round = 0; round < 3; round++) await Promise.all(sessions.map((s) => s.query(SQL)));
    await sleep(300);
    const each = sessions.map((s) => pssBytes(s.pid));
    const sessionsBytes = each.reduce((a, b) => a + b, 0);
    const extra = measureExtra?.() ?? { bytes: 0, processes: 0 };
    return { totalBytes: sessionsBytes + extra.bytes, sessionsBytes, extra };
  } finally {
    await Promise.all(sessions.map((s) => s.close()));
  }
}

export async function measureSqliteMemory(ctx) {
  const { cleanup, counts, repo } = ctx;
  const n = counts.memorySessions;
  const file = benchSqliteFile(repo, cleanup);
  const hanactl = await startBenchHanactl({ repo, poolMax: undefined, cleanup });
  await hanactl.add('lite', `sqlite:${file}`);
  const broker = await measureSet(
    n,
    (i) => openSession({ ...hanactl.shimCommand('lite'), cleanup, label: `relay ${i}` }),
    () => treePssBytes(hanactl.daemonPid),
  );
  await hanactl.cli('daemon', 'stop');
  const inproc = await measureSet(n, (i) =>
    openSession({ ...ctx.inprocCommand(`sqlite:${file}`), cleanup, label: `in-process SQLite server ${i}` }),
  );
  return {
    sessions: n,
    hanactl: {
      totalBytes: broker.totalBytes,
      relayBytesEach: broker.sessionsBytes / n,
      daemonAndHostsBytes: broker.extra.bytes,
      hosts: broker.extra.processes - 1,
      hostBytesEach:
        broker.extra.each.length > 1 ? broker.extra.each.slice(1).reduce((a, b) => a + b, 0) / (broker.extra.each.length - 1) : 0,
    },
    inproc: { totalBytes: inproc.totalBytes, serverBytesEach: inproc.totalBytes / n },
    // What the broker adds besides the sessions' own processes, against the same servers.
    daemonAndHostsRatio: broker.extra.bytes / inproc.totalBytes,
  };
}
