#!/usr/bin/env node
// Benchmarks, side by side in one run: `npm run bench` (or `-- --quick` for a smoke run).
// Writes bench/RESULTS.md (a table, the machine, versions, date) and bench/results.json.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';

const repo = resolve(import.meta.dirname, '../..');
const bin = join(repo, 'bin/hanactl.js');
const quick = process.argv.includes('--quick');
const calls = quick ? 200 : 2000;
const warmup = quick ? 20 : 200;
const pgUrl = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function time(n, fn) {
  const samples = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), n };
}

function progress(text) {
  process.stderr.write(`bench: ${text}\n`);
}

const home = mkdtempSync(join(tmpdir(), 'hanactl-bench-'));
const env = { ...process.env, HANACTL_HOME: home, HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') };
const results = { date: new Date().toISOString(), quick, calls, figures: {} };

try {
  const add = spawnSync(process.execPath, [bin, 'add', 'bench', pgUrl, '--no-password'], { env, encoding: 'utf8' });
  if (add.status !== 0) throw new Error(`hanactl add failed: ${add.stderr}`);

  progress(`hanactl: ${calls} run_query SELECT 1 through shim -> daemon -> PostgreSQL`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--connection', 'bench'], env });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  const viaShim = () =>
    client.callTool({ name: 'run_query', arguments: { sql: 'SELECT 1' } }).then((r) => {
      if (r.isError) throw new Error(JSON.stringify(r.content));
    });
  await time(warmup, viaShim);
  results.figures.hanactl = await time(calls, viaShim);
  await client.close();

  progress(`floor: ${calls} SELECT 1 on a warm pg client in this process`);
  const floor = new pg.Client({ connectionString: pgUrl });
  await floor.connect();
  const direct = () => floor.query('SELECT 1');
  await time(warmup, direct);
  results.figures.floor = await time(calls, direct);
  await floor.end();
} finally {
  spawnSync(process.execPath, [bin, 'daemon', 'stop'], { env });
  rmSync(home, { recursive: true, force: true });
}

const f = results.figures;
const pgVersion = spawnSync('psql', ['--version'], { encoding: 'utf8' }).stdout.trim();
const ms = (v) => `${v.toFixed(3)} ms`;
const md = `# Benchmark results

${results.date} · ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'} · ${Math.round(totalmem() / 2 ** 30)} GiB · Node ${process.version} · ${pgVersion}${quick ? ' · **quick run**' : ''}

Regenerate with \`npm run bench\`. Loopback PostgreSQL; ${calls} calls each after ${warmup} warm-up calls.

| contender | p50 | p99 | p50 vs floor |
|---|---|---|---|
| hanactl: SDK Client → stdio shim → daemon → warm pool | ${ms(f.hanactl.p50)} | ${ms(f.hanactl.p99)} | ${(f.hanactl.p50 / f.floor.p50).toFixed(1)}× |
| floor: warm \`pg\` client in-process, no MCP | ${ms(f.floor.p50)} | ${ms(f.floor.p99)} | 1.0× |

Broker overhead over the floor at p50: ${ms(f.hanactl.p50 - f.floor.p50)} (MCP framing, shim → daemon HTTP over the Unix socket, pool borrow, a read-only transaction that is rolled back).
`;
mkdirSync(join(repo, 'bench'), { recursive: true });
writeFileSync(join(repo, 'bench/RESULTS.md'), md);
writeFileSync(join(repo, 'bench/results.json'), `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(md);
