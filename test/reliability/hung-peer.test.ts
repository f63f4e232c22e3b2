import { rmSync } from 'node:fs';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { apiClient } from './helpers/daemon-api.js';
import { unexpectedErrors, writeConfig } from './helpers/daemon-log.js';
import { ms, report } from './helpers/figures.js';
import { HungPeer } from './helpers/hung-peer.js';
import { killHome, sleep, waitFor } from './helpers/procs.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('hung');
const CONNECT_TIMEOUT_MS = 1500;
/**
 * `hanactl test` is a fresh node process: its start-up, the daemon's answer and, for HANA, loading
 * its client library, on top of the timeout — seconds on a loaded machine. Far below the call's
 * own 30 s: what this bounds is a stall, not speed (the time is reported).
 */
const CLI_SLACK_MS = 10_000;
/** HANA's client: hanactl's own backstop fires 2 s after the client's connectTimeout. */
const HANA_BACKSTOP_MS = 2000;
const QUERY_TIMEOUT_MS = 2000;
/** Past its time limit, a statement still running on the server this long counts as a stall. */
const STALL_MS = 5000;
const POOL_MAX = 2;

const pgAvailable = await serverAvailable('postgres');
const myAvailable = await serverAvailable('mysql');

describe('a hung peer and a long query', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  let peer: HungPeer;
  const appName = `hanactl-hung-${process.pid}`;

  beforeAll(async () => {
    scan.addHome(home.dir);
    writeConfig(home.dir, { connectTimeoutMs: CONNECT_TIMEOUT_MS, pool: { max: POOL_MAX, acquireTimeoutMillis: 5000 } });
    peer = await HungPeer.start();
    const at = `127.0.0.1:${peer.port}`;
    await home.ok(['add', '--no-test', 'hung-pg', `postgres://app@${at}/db`, '--password-stdin'], { input: SECRET });
    await home.ok(['add', '--no-test', 'hung-my', `mysql://app@${at}/db`, '--password-stdin'], { input: SECRET });
    await home.ok(['add', '--no-test', 'hung-hana', `hana://app@${at}`, '--password-stdin'], { input: SECRET });
    if (pgAvailable) {
      const u = new URL(PG_URL);
      u.searchParams.set('application_name', appName);
      await home.ok(['add', '--no-test', 'pg', u.toString(), '--no-password']);
    }
    if (myAvailable) await home.ok(['add', '--no-test', 'my', MYSQL_URL, '--no-password']);
  });

  afterAll(async () => {
    await home.stop();
    killHome(home.dir);
    await peer?.close();
    rmSync(home.dir, { recursive: true, force: true });
  });

  it.each([
    ['postgres', 'hung-pg', 0],
    ['mysql', 'hung-my', 0],
    ['hana', 'hung-hana', HANA_BACKSTOP_MS],
  ] as const)(
    '%s: `hanactl test` against a peer that accepts and never answers fails within the connect timeout',
    async (engine, name, backstop) => {
      const acceptedBefore = peer.accepted;
      const started = performance.now();
      const result = await home.run(['test', name], { timeoutMs: 30_000 });
      const tookMs = performance.now() - started;
      scan.add(`hanactl test ${name}`, result.stdout + result.stderr);
      // The daemon gives its sockets to the hung peer back: none is left open.
      const closed = await waitFor(() => peer.open === 0, 5000, 50);
      report(`hung-peer-${engine}`, {
        connectTimeoutMs: CONNECT_TIMEOUT_MS,
        tookMs: ms(tookMs),
        boundMs: CONNECT_TIMEOUT_MS + backstop + CLI_SLACK_MS,
        exit: result.code,
        peerAccepted: peer.accepted - acceptedBefore,
        socketsLeftOpen: peer.open,
        said: result.stderr.trim().split('\n').pop(),
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^hanactl: .*(timeout|timed out|did not answer|within)/im);
      expect(result.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
      expect(peer.accepted - acceptedBefore).toBeGreaterThan(0);
      expect(tookMs).toBeLessThan(CONNECT_TIMEOUT_MS + backstop + CLI_SLACK_MS);
      expect(closed).toBe(true);
    },
    30_000,
  );

  async function longQueries(connection: string, sql: string, running: () => Promise<number>) {
    const api = apiClient(home);
    const calls: { tookMs: number; code: string; goneAfterMs: number }[] = [];
    try {
      for (let i = 0; i < POOL_MAX + 2; i++) {
        const started = performance.now();
        let code = 'ok';
        try {
          await api.query({ connection, sql, timeoutMs: QUERY_TIMEOUT_MS });
        } catch (err) {
          code = (err as { code: string }).code;
          scan.add('long query error', (err as Error).message);
        }
        const tookMs = performance.now() - started;
        // The statement is gone from the server (cancelled there, not only abandoned by the client).
        await waitFor(async () => (await running()) === 0, QUERY_TIMEOUT_MS + STALL_MS - (performance.now() - started) + 50, 20);
        const goneAfterMs = (await running()) === 0 ? performance.now() - started : Number.POSITIVE_INFINITY;
        calls.push({ tookMs, code, goneAfterMs });
      }
      const quick = await api.query({ connection, sql: 'SELECT 1 AS one', timeoutMs: 5000 });
      const pool = (await api.pools()).find((p) => p.connections.includes(connection));
      return { calls, quick, pool };
    } finally {
      api.close();
    }
  }

  function checkLong(engine: string, result: Awaited<ReturnType<typeof longQueries>>) {
    report(`long-query-${engine}`, {
      timeoutMs: QUERY_TIMEOUT_MS,
      calls: result.calls.length,
      codes: result.calls.map((c) => c.code),
      tookMs: result.calls.map((c) => ms(c.tookMs)),
      goneFromServerAfterMs: result.calls.map((c) => ms(c.goneAfterMs)),
      poolAfter: result.pool && {
        total: result.pool.total,
        idle: result.pool.idle,
        inUse: result.pool.inUse,
        waiting: result.pool.waiting,
      },
      quickQueryAfter: result.quick.rows,
    });
    // How close to its limit a statement stops is a speed figure (reported above: about timeout +
    // 0.2 s on a quiet machine). The first call also opens its connection, which at a load of 15
    // took it past timeout + 1 s. What is asserted is that it stops, on the server, long before the
    // statement's own minutes: a stall bound.
    for (const c of result.calls) {
      expect(c.code).toBe('QUERY_TIMEOUT');
      expect(c.tookMs).toBeLessThan(QUERY_TIMEOUT_MS + STALL_MS);
      expect(c.goneAfterMs).toBeLessThan(QUERY_TIMEOUT_MS + STALL_MS);
    }
    expect(result.quick.rows).toEqual([{ one: 1 }]);
    expect(result.pool?.inUse).toBe(0);
    expect(result.pool?.waiting).toBe(0);
    expect(result.pool?.total).toBeLessThanOrEqual(POOL_MAX);
  }

  it.skipIf(!pgAvailable)(
    'PostgreSQL: a long query with a 2 s timeout is cancelled on the server near its timeout; max + 2 in a row leave the pool usable',
    async () => {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      try {
        const result = await longQueries('pg', 'SELECT count(*) FROM generate_series(1, 300000000)', async () => {
          const r = await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND pid <> pg_backend_pid()",
            [appName],
          );
          return r.rows[0].n as number;
        });
        checkLong('postgres', result);
      } finally {
        await admin.end();
      }
    },
    60_000,
  );

  it.skipIf(!myAvailable)(
    'MariaDB: a heavy cross join with a 2 s timeout is killed on the server near its timeout; max + 2 in a row leave the pool usable',
    async () => {
      const u = new URL(MYSQL_URL);
      const admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
      const marker = `hung_${process.pid}`;
      try {
        const result = await longQueries('my', `SELECT COUNT(*) AS ${marker} FROM seq_1_to_100000 a, seq_1_to_100000 b`, async () => {
          const [rows] = await admin.query(
            "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE ? AND ID <> CONNECTION_ID() AND COMMAND <> 'Sleep'",
            [`%${marker}%`],
          );
          return Number((rows as { n: number }[])[0]?.n);
        });
        checkLong('mariadb', result);
      } finally {
        await admin.end();
      }
    },
    60_000,
  );

  it('leaks the planted password nowhere and logs no unexpected error', async () => {
    await sleep(100);
    await home.stop();
    for (const out of home.outputs) scan.add('cli output', out);
    const { hits, scannedFiles } = scan.hits();
    const unexpected = unexpectedErrors(home.dir);
    report('hung-peer-secrets', { scannedFiles, hits: hits.length, unexpectedErrorLines: unexpected.length });
    expect(hits).toEqual([]);
    expect(unexpected).toEqual([]);
  });
});
