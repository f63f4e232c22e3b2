import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { startShim, textOf } from '../helpers/mcp-client.js';

const pgAvailable = await serverAvailable('postgres');

describe('the shim and the daemon’s life', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('the first shim starts the daemon itself', async () => {
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
    const shim = await startShim(home.env);
    try {
      const result = await shim.call('list_connections');
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toMatch(/No connections are registered.*hanactl(?:\.js)? add/);
      expect((await home.run(['daemon', 'status'])).code).toBe(0);
    } finally {
      await shim.close();
    }
  });

  it.skipIf(!pgAvailable)('SIGTERM lets an in-flight call finish; a call made meanwhile runs on the next daemon', async () => {
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    const shim = await startShim(home.env, ['--connection', 'pg']);
    const table = `lifecycle_held_${process.pid}`;
    const admin = new pg.Client({ connectionString: PG_URL });
    const watcher = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await watcher.connect();
    try {
      await admin.query(`CREATE TABLE ${table} (a int)`);
      // The call waits on a lock the test holds, so it is in flight for exactly as long as the
      // test wants, however loaded the machine is.
      await admin.query('BEGIN');
      await admin.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
      const inFlight = shim.call('run_query', { sql: `SELECT count(*) AS n FROM ${table}` });
      let settled = false;
      void inFlight.finally(() => (settled = true));
      // Read in its own transaction each time: inside the lock's transaction the view would be a snapshot.
      const waiting = async () =>
        Number(
          (
            await watcher.query(
              "SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()",
              [table],
            )
          ).rows[0].n,
        ) > 0;
      while (!settled && !(await waiting())) await new Promise((r) => setTimeout(r, 20));
      expect(settled).toBe(false);
      process.kill(status.pid, 'SIGTERM');
      // Once the daemon says it is stopping, the call is released and must still be answered.
      const log = join(home.dir, 'logs', 'daemon.log');
      const stopping = () => existsSync(log) && readFileSync(log, 'utf8').includes('daemon stopping');
      while (!stopping()) await new Promise((r) => setTimeout(r, 20));
      // A call made while it stops is not this daemon's: it waits in the relay, or crosses the bye on
      // the wire and is refused unrun, and either way the next daemon runs it; never "restarted".
      const during = shim.call('run_query', { sql: 'SELECT 2 AS two' });
      await admin.query('COMMIT');
      const result = await inFlight;
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ n: 0 }] });
      const next = await during;
      expect(next.structuredContent, textOf(next)).toMatchObject({ rows: [{ two: 2 }] });
      // The stopped daemon is gone; the call made meanwhile started the next one, on the same socket path.
      const alive = (pid: number) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      const deadline = Date.now() + 10_000;
      while (alive(status.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(alive(status.pid)).toBe(false);
      const now = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
      expect(now.pid).not.toBe(status.pid);
      expect(now.socket).toBe(status.socket);
      const after = await shim.call('run_query', { sql: 'SELECT 1 AS one' });
      expect(after.structuredContent, textOf(after)).toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await admin.query('ROLLBACK').catch(() => {});
      await admin.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
      await admin.end();
      await watcher.end();
      await shim.close();
    }
  });
});

describe('a daemon stopping while peers that never spoke are connected', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('stops at once: a peer that hung up without a byte, or stays silent, holds nothing open', async () => {
    await home.ok(['daemon', 'start']);
    const status = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    const opened = (): Promise<Socket> =>
      new Promise((resolve, reject) => {
        const s = connect(status.socket).once('error', reject);
        s.once('connect', () => resolve(s));
      });
    const peers: Socket[] = [];
    try {
      // The auto-starter's probe: connect, hang up.
      for (let i = 0; i < 3; i++) {
        const probe = await opened();
        const closed = new Promise((r) => probe.once('close', r));
        probe.end();
        await closed;
      }
      // A peer that connected and says nothing.
      const silent = await opened();
      silent.on('error', () => {});
      peers.push(silent);
      const started = Date.now();
      await home.ok(['daemon', 'stop']);
      const stoppedWithin = await new Promise<number>((resolve) => {
        const check = () => {
          try {
            process.kill(status.pid, 0);
          } catch {
            return resolve(Date.now() - started);
          }
          if (Date.now() - started > 20_000) return resolve(Number.POSITIVE_INFINITY);
          setTimeout(check, 25);
        };
        check();
      });
      // Well inside the 10 s a busy client is given to finish.
      expect(stoppedWithin).toBeLessThan(5_000);
      expect((await home.run(['daemon', 'status'])).code).toBe(1);
    } finally {
      for (const p of peers) p.destroy();
    }
  });
});

describe('a shim whose daemon cannot start', () => {
  const home = new TestHome({ keyInEnv: false, extraEnv: { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' } });
  afterAll(() => home.dispose());

  it('answers tool calls with an isError that says what to do', async () => {
    const shim = await startShim(home.env);
    try {
      const result = await shim.call('list_connections');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/could not start/);
      expect(textOf(result)).toMatch(/HANACTL_REGISTRY_KEY/);
      expect(existsSync(join(home.dir, 'registry.db'))).toBe(false);
    } finally {
      await shim.close();
    }
  });
});
