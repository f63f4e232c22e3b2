// Command-line options of `npm run bench` and the counts each mode uses.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

export const FIGURES = [
  'toolsList',
  'latency',
  'spawnPerCall',
  'bigTable',
  'coldStart',
  'memory',
  'sqliteMemory',
  'concurrencyPg',
  'concurrencyMaria',
];

const FULL = {
  calls: 2000,
  warmup: 200,
  rounds: 10,
  spawnCalls: 30,
  coldStarts: 10,
  memorySessions: 10,
  churnSessions: 200,
  concurrency: { sessions: 50, calls: 200 },
  bigTableRows: 1_000_000,
  bigTableCalls: 10,
};

// Small counts, same shapes: every figure runs, the run stays well under a minute.
const QUICK = {
  calls: 200,
  warmup: 20,
  rounds: 4,
  spawnCalls: 5,
  coldStarts: 3,
  memorySessions: 10,
  churnSessions: 20,
  concurrency: { sessions: 12, calls: 25 },
  bigTableRows: 1_000_000,
  bigTableCalls: 3,
};

const USAGE = `usage: node scripts/bench/run.mjs [--quick] [--out DIR] [--only FIGURE,...]
  --quick   small counts (a smoke run; the files say so)
  --out     where RESULTS.md, results.json and latency.svg go (default: bench/)
  --only    run only these figures: ${FIGURES.join(', ')}
env: HANACTL_TEST_PG_URL, HANACTL_TEST_MYSQL_URL (default loopback PostgreSQL and MariaDB)`;

export function parseOptions(argv, repo) {
  const { values } = parseArgs({
    args: argv,
    options: { quick: { type: 'boolean' }, out: { type: 'string' }, only: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : FIGURES;
  const unknown = only.filter((f) => !FIGURES.includes(f));
  if (unknown.length > 0) throw new Error(`unknown figure(s) ${unknown.join(', ')}\n${USAGE}`);
  const quick = values.quick === true;
  return {
    quick,
    counts: { ...(quick ? QUICK : FULL), poolMax: 10 },
    outDir: resolve(values.out ?? resolve(repo, 'bench')),
    only: new Set(only),
    pgUrl: process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    mysqlUrl: process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
  };
}
