#!/usr/bin/env node
/**
 * Round trips between the daemon and PostgreSQL per `run_query SELECT 1`, the whole daemon in the
 * path (tool, policy, pool, driver): a plain connection, and one whose rows are separated by a
 * context value (`--context`, the value a shim's `MCP_CONTEXT_<NAME>` gives), both logging in as
 * a scratch role that is not a superuser. The daemon reaches PostgreSQL through a TCP relay in
 * this process that counts turns (lib/counting-relay.mjs): the client speaking after the server has answered (or first on
 * a connection) starts one; pipelined statements sent before any answer are one. Prints turns per
 * call, how many calls sent the role reset of a separated call, the daemon's CPU time and p50/p99 per call; a
 * connection under a cost guard (two turns: its plan is read before the statement goes) shows
 * that the count counts. Run `npm run build` first.
 *
 *   node scripts/bench/call-round-trips.mjs [calls=500]
 *   HANACTL_TEST_PG_URL chooses the server (as in the tests).
 */
import { resolve } from 'node:path';
import { startBenchHanactl } from './lib/bench-env.mjs';
import { countingRelay } from './lib/counting-relay.mjs';
import { pgAdmin } from './lib/databases.mjs';
import { Cleanup, cpuMs } from './lib/processes.mjs';
import { openSocketSession } from './lib/socket-session.mjs';
import { summarise, timeCalls } from './lib/stats.mjs';

const calls = Number(process.argv[2] ?? 500);
const repo = resolve(import.meta.dirname, '../..');
const pgUrl = new URL(process.env.HANACTL_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
const cleanup = new Cleanup();
/** The first of the steps that make a separated call run as the login (postgres-call.ts). */
const ROLE_RESET = 'SET LOCAL SESSION AUTHORIZATION DEFAULT';

try {
  const admin = await pgAdmin(pgUrl.toString(), cleanup);
  const role = `hanactl_bench_rt_${process.pid}`;
  await admin.client.query(`CREATE ROLE ${role} LOGIN`);
  cleanup.add(`drop role ${role}`, async () => {
    await admin.client.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]);
    await admin.client.query(`DROP ROLE IF EXISTS ${role}`);
  });
  const login = new URL(pgUrl);
  login.username = role;
  login.password = '';
  const relay = await countingRelay(login.toString());
  cleanup.add('close the counting relay', () => relay.close());
  const hanactl = await startBenchHanactl({ repo, poolMax: 1, cleanup });
  await hanactl.add('plain', relay.url);
  await hanactl.cli('add', 'separated', relay.url, '--no-password', '--context', 'TENANT');
  // The cost guard's EXPLAIN is read before the statement is sent: two turns, which shows the count counts.
  await hanactl.add('guarded', relay.url);
  await hanactl.cli('set', 'guarded', '--max-cost', '1000');
  const open = (connection, context) => openSocketSession({ socketPath: hanactl.socket, connection, cwd: hanactl.home, cleanup, context });
  const cases = { plain: await open('plain'), separated: await open('separated', { TENANT: 't1' }), guarded: await open('guarded') };
  for (const [name, session] of Object.entries(cases)) {
    const call = () => session.query('SELECT 1');
    await timeCalls(50, call);
    relay.take();
    const cpuBefore = cpuMs(hanactl.daemonPid);
    const times = summarise(await timeCalls(calls, call));
    const { roundTrips, sent } = relay.take();
    const perCall = roundTrips / calls;
    const resets = (sent.split(ROLE_RESET).length - 1) / calls;
    const cpu = (cpuMs(hanactl.daemonPid) - cpuBefore) / calls;
    console.log(
      `${name.padEnd(10)} round trips/call ${perCall.toFixed(2)}  role reset sent ${resets.toFixed(2)}/call  daemon CPU ${cpu.toFixed(3)} ms/call  p50 ${times.p50.toFixed(3)} ms  p99 ${times.p99.toFixed(3)} ms`,
    );
  }
} finally {
  await cleanup.run();
}
