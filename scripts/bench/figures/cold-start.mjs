// Figure: cold start — spawn to `tools/list` answered: hanactl's relay (the daemon already running),
// DBHub (connecting to PostgreSQL is part of its start) and a bare SDK server with no tools.
import { join } from 'node:path';
import { openSession } from '../lib/mcp-session.mjs';
import { median, since, summarise } from '../lib/stats.mjs';

export async function measureColdStart(ctx) {
  const { repo, hanactl, cleanup } = ctx;
  const node = process.execPath;
  const env = hanactl.env;
  const connection = ['--connection', 'bench'];
  const contenders = {
    relay: hanactl.shimCommand('bench'),
    bundle: { command: node, args: [join(repo, 'dist/shim.cjs'), 'mcp', ...connection], env },
    fullCli: { command: node, args: [hanactl.bin, 'mcp', ...connection], env },
    dbhub: ctx.dbhubCommand(ctx.pgUrl),
    bare: { command: node, args: [join(repo, 'scripts/bench/bare-server.mjs')], env },
  };
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  // One discarded round warms the file cache; then the contenders take turns each round.
  for (let round = -1; round < ctx.counts.coldStarts; round++) {
    for (const [name, spec] of Object.entries(contenders)) {
      const started = process.hrtime.bigint();
      const session = await openSession({ ...spec, cleanup, label: `cold start ${name}` });
      await session.client.listTools();
      const ms = since(started);
      await session.close();
      if (round >= 0) samples[name].push(ms);
    }
  }
  const result = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, { median: median(v), ...summarise(v) }]));
  return result;
}
