#!/usr/bin/env node
/**
 * What resolving a statement's names on the server (postgres-resolve.ts) adds to a run_query call
 * on PostgreSQL: N calls through a pool and the built driver (dist/, `npm run build` first) of
 * `SELECT 1` (names nothing: no resolve step), a one-table select, one that calls functions and
 * one over a view (the full walk), and writes on a writable connection (an UPDATE of that table;
 * an INSERT into a table with a serial key, defaults and a CHECK, which the first check clears;
 * one into a table whose trigger calls a person's function, which takes the full walk), each
 * without and with the references the policy reports, plus
 * the policy check itself for each text. Prints p50/p90 per
 * call and the client's round trips per call (bursts of socket writes; the resolve step is
 * pipelined, so it adds none).
 *
 *   node scripts/bench/resolve-cost.mjs [calls=3000]
 *   HANACTL_TEST_PG_URL chooses the server (as in the tests).
 */
import net from 'node:net';
import { loadDriverFactory } from '../../dist/daemon/engines/index.js';
import { checkStatement } from '../../dist/daemon/policy/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../dist/daemon/pools/pool.js';
import { parseConnectionUrl } from '../../dist/shared/connection-url.js';

const calls = Number(process.argv[2] ?? 3000);
const url = process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TABLE = `hanactl_resolve_bench_${process.pid}`;
const VIEW = `${TABLE}_v`;
const WRITTEN = `${TABLE}_w`;
const TRIGGERED = `${TABLE}_t`;

let bursts = 0;
let inBurst = false;
const write = net.Socket.prototype.write;
net.Socket.prototype.write = function (...args) {
  if (!inBurst) {
    inBurst = true;
    bursts++;
    process.nextTick(() => {
      inBurst = false;
    });
  }
  return write.apply(this, args);
};

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const { target, password } = parseConnectionUrl(url);
const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
const pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 1 }, 'postgres');

async function run(sql, readOnly, references) {
  const lease = await pool.acquire();
  try {
    return await lease.connection.execute(sql, [], { maxRows: 100, timeoutMs: 10_000, readOnly, ...(references ? { references } : {}) });
  } finally {
    lease.release();
  }
}

async function measure(sql, references, readOnly) {
  for (let i = 0; i < 300; i++) await run(sql, readOnly, references);
  const times = [];
  const before = bursts;
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await run(sql, readOnly, references);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50).toFixed(3), p90: pct(times, 90).toFixed(3), roundTrips: ((bursts - before) / calls).toFixed(2) };
}

function policyCost(sql, allowWrite) {
  const options = { dialect: 'postgres', allowWrite };
  for (let i = 0; i < 300; i++) checkStatement(sql, options, true);
  const t = performance.now();
  for (let i = 0; i < calls; i++) checkStatement(sql, options, true);
  return ((performance.now() - t) / calls).toFixed(3);
}

await run(`CREATE TABLE IF NOT EXISTS public.${TABLE} (id int primary key, item text)`, false);
await run(`INSERT INTO public.${TABLE} SELECT g, 'item ' || g FROM generate_series(1, 100) g ON CONFLICT DO NOTHING`, false);
await run(`CREATE OR REPLACE VIEW public.${VIEW} AS SELECT id, item FROM public.${TABLE}`, false);
await run(
  `CREATE TABLE IF NOT EXISTS public.${WRITTEN} (id serial PRIMARY KEY, n int DEFAULT 0 CHECK (n >= 0), at timestamptz DEFAULT now())`,
  false,
);
await run(`CREATE TABLE IF NOT EXISTS public.${TRIGGERED} (n int)`, false);
await run(
  `CREATE OR REPLACE FUNCTION public.${TRIGGERED}_f() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.n := NEW.n + 1; RETURN NEW; END $$`,
  false,
);
await run(
  `CREATE OR REPLACE TRIGGER bump BEFORE INSERT ON public.${TRIGGERED} FOR EACH ROW EXECUTE FUNCTION public.${TRIGGERED}_f()`,
  false,
);
try {
  for (const [sql, readOnly] of [
    ['SELECT 1', true],
    [`SELECT id, item FROM ${TABLE} WHERE id = 7`, true],
    [`SELECT count(*), upper(max(item)) FROM ${TABLE}`, true],
    [`SELECT id, item FROM ${VIEW} WHERE id = 7`, true],
    [`UPDATE ${TABLE} SET item = item WHERE id = 7`, false],
    [`INSERT INTO ${WRITTEN} (n) VALUES (1)`, false],
    [`INSERT INTO ${TRIGGERED} VALUES (1)`, false],
  ]) {
    const verdict = checkStatement(sql, { dialect: 'postgres', allowWrite: !readOnly }, true);
    const references = verdict.ok ? verdict.references : undefined;
    console.log(`${sql}: policy check ${policyCost(sql, !readOnly)} ms/call; references ${JSON.stringify(references ?? null)}`);
    const without = await measure(sql, undefined, readOnly);
    console.log(`  without resolve  p50 ${without.p50} ms  p90 ${without.p90} ms  round trips/call ${without.roundTrips}`);
    if (references) {
      const withResolve = await measure(sql, references, readOnly);
      console.log(`  with resolve     p50 ${withResolve.p50} ms  p90 ${withResolve.p90} ms  round trips/call ${withResolve.roundTrips}`);
    }
  }
} finally {
  await run(`DROP VIEW IF EXISTS public.${VIEW}`, false);
  await run(`DROP TABLE IF EXISTS public.${WRITTEN}, public.${TRIGGERED}`, false);
  await run(`DROP FUNCTION IF EXISTS public.${TRIGGERED}_f()`, false);
  await run(`DROP TABLE IF EXISTS public.${TABLE}`, false);
  await pool.end();
}
