#!/usr/bin/env node
/**
 * Per-call cost of the driver layer alone, on the real servers: N calls of `SELECT 1` through a
 * pool and the built driver (dist/, run `npm run build` first), as the query service makes them,
 * without and with one context value, and (PostgreSQL) with rows separated, with that value signed or under a cost guard. Prints p50/p90 per call and the client's round trips per
 * call: bursts of socket writes, a burst being the writes of one tick (a protocol step, or a
 * pipelined batch, is one burst; a step that waits for the server's answer starts a new one).
 *
 *   node scripts/bench/driver-round-trips.mjs [calls=2000]
 *   HANACTL_TEST_PG_URL / HANACTL_TEST_MYSQL_URL choose the servers (as in the tests).
 */
import net from 'node:net';
import { newContextKey } from '../../dist/daemon/engines/signed-context.js';
import { loadDriverFactory } from '../../dist/daemon/engines/index.js';
import { DEFAULT_POOL_OPTIONS, Pool } from '../../dist/daemon/pools/pool.js';
import { parseConnectionUrl } from '../../dist/shared/connection-url.js';

const calls = Number(process.argv[2] ?? 2000);
const targets = {
  postgres: process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  mariadb: process.env.HANACTL_TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test',
};

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

/** A cost guard whose limit `SELECT 1` stays within: its plan is read, and the statement runs. */
const costGuard = { maxCost: 1000, over: (e) => new Error(`over: ${e}`), unavailable: (r) => new Error(r) };

async function measure(pool, context, readOnly, contextKey, guard, separated) {
  const once = async () => {
    const lease = await pool.acquire();
    try {
      await lease.connection.execute('SELECT 1', [], {
        maxRows: 100,
        timeoutMs: 10_000,
        readOnly,
        ...(context ? { context } : {}),
        ...(contextKey ? { contextKey } : {}),
        ...(guard ? { costGuard: guard } : {}),
        ...(separated ? { separated } : {}),
      });
    } finally {
      lease.release();
    }
  };
  for (let i = 0; i < 200; i++) await once();
  const times = [];
  const before = bursts;
  for (let i = 0; i < calls; i++) {
    const t = performance.now();
    await once();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { p50: pct(times, 50).toFixed(3), p90: pct(times, 90).toFixed(3), roundTrips: ((bursts - before) / calls).toFixed(2) };
}

for (const [name, url] of Object.entries(targets)) {
  const { target, password } = parseConnectionUrl(url);
  const driver = (await loadDriverFactory(target.engine))(target, password !== undefined ? { password } : {}, { connectTimeoutMs: 5000 });
  const pool = new Pool(() => driver.connect(), { ...DEFAULT_POOL_OPTIONS, max: 1 }, name);
  const cases = [
    ['read', undefined, true],
    ['read + context', { CUSTOMER_ID: '42' }, true],
    // Rows separated (PostgreSQL): the call also runs as the login, checked before and after the statement.
    ...(name === 'postgres' ? [['read + separated', { CUSTOMER_ID: '42' }, true, undefined, undefined, true]] : []),
    // Signed context values (PostgreSQL only): an HMAC per value, one more bound parameter each.
    ...(name === 'postgres' ? [['read + signed', { CUSTOMER_ID: '42' }, true, newContextKey()]] : []),
    // The cost guard (PostgreSQL): EXPLAIN first, the statement sent once its plan is read.
    ...(name === 'postgres' ? [['read + guard', undefined, true, undefined, costGuard]] : []),
    ['write', undefined, false],
  ];
  for (const [label, context, readOnly, contextKey, guard, separated] of cases) {
    const r = await measure(pool, context, readOnly, contextKey, guard, separated);
    console.log(`${name.padEnd(9)} ${label.padEnd(15)} p50 ${r.p50} ms  p90 ${r.p90} ms  round trips/call ${r.roundTrips}`);
  }
  await pool.end();
}
