// Figure: one query by spawning node on a script that connects, queries and exits.
import { join } from 'node:path';
import { spawnTimed } from '../lib/processes.mjs';
import { summarise } from '../lib/stats.mjs';

export async function measureSpawnPerCall(ctx) {
  const script = join(ctx.repo, 'scripts/bench/spawn-query.mjs');
  const once = () => spawnTimed(process.execPath, [script, ctx.pgUrl, 'SELECT 1']);
  await once(); // the file cache, as a person's second call would find it
  const samples = [];
  for (let i = 0; i < ctx.counts.spawnCalls; i++) samples.push((await once()).ms);
  return summarise(samples);
}
