import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

/** Resolves once process `pid` is gone (it is no child of the test's, so there is no exit event to wait on). */
async function gone(pid: number, deadlineMs = 15_000): Promise<boolean> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Loaded into the daemon through NODE_OPTIONS: SIGUSR2 throws an error that nothing catches. */
const PLANTED = `process.on('SIGUSR2', () => {
  throw Object.assign(new Error('planted failure with password=hunter2 in its text'), { code: 'E_PLANTED' });
});
`;

/**
 * A home with one SQLite connection and a relay session on it, started before and ended after
 * the describe block it is called in; `prepare` runs first (e.g. to plant a failure).
 */
function liteSession(prepare: (h: TestHome) => void = () => {}): { home: TestHome; shim: () => ShimHandle } {
  const home = new TestHome();
  let shim: ShimHandle | undefined;
  beforeAll(async () => {
    prepare(home);
    writeFileSync(join(home.dir, 'lite.db'), '');
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    shim = await startShim(home.env, ['--connection', 'lite']);
  });
  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });
  return {
    home,
    shim: () => {
      if (!shim) throw new Error('the relay session did not start');
      return shim;
    },
  };
}

describe('a daemon that dies of an uncaught error says why in its log', () => {
  const home = new TestHome();

  beforeAll(() => {
    writeFileSync(join(home.dir, 'planted.mjs'), PLANTED);
    home.env.NODE_OPTIONS = `--import ${join(home.dir, 'planted.mjs')}`;
  });

  afterAll(async () => {
    await home.dispose();
  });

  it('logs the error (kind, code, masked message, frames) before the process exits', async () => {
    await home.ok(['daemon', 'start']);
    const { pid } = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    process.kill(pid, 'SIGUSR2');
    expect(await gone(pid)).toBe(true);
    const log = readFileSync(join(home.dir, 'logs', 'daemon.log'), 'utf8');
    expect(log).not.toContain('hunter2');
    const fatal = log
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line))
      .find((entry) => entry.level === 60);
    expect(fatal).toMatchObject({
      pid,
      msg: 'daemon stopped by an uncaught error',
      origin: 'uncaughtException',
      error: { name: 'Error', code: 'E_PLANTED', message: 'planted failure with password=*** in its text' },
    });
    expect(fatal.error.frames.length).toBeGreaterThan(0);
  }, 60_000);
});

describe('a relay session outlives two crashes of its daemon', () => {
  const { home, shim: session } = liteSession();

  it('after each kill -9 of the daemon, the next call starts a new one and answers', async () => {
    const pids: number[] = [];
    for (let crash = 0; crash < 3; crash++) {
      const result = await session().call('run_query', { sql: 'SELECT 1 AS one' });
      expect(result.isError, `call after ${crash} crashes: ${textOf(result)}`).toBeFalsy();
      const { pid } = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
      expect(pids).not.toContain(pid);
      pids.push(pid);
      process.kill(pid, 'SIGKILL');
      expect(await gone(pid)).toBe(true);
    }
  }, 120_000);
});

describe('a relay session outlives two daemons dying of an error during its calls', () => {
  const { home, shim: session } = liteSession((home) => {
    writeFileSync(join(home.dir, 'planted.mjs'), PLANTED);
    home.env.NODE_OPTIONS = `--import ${join(home.dir, 'planted.mjs')}`;
  });
  const LONG = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c';

  it('the call in flight answers DAEMON_RESTARTED; the next call starts a new daemon and answers', async () => {
    for (let crash = 0; crash < 2; crash++) {
      const ready = await session().call('run_query', { sql: 'SELECT 1 AS one' });
      expect(ready.isError, `call after ${crash} crashes: ${textOf(ready)}`).toBeFalsy();
      const { pid } = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
      const inFlight = session().call('run_query', { sql: LONG });
      const deadline = Date.now() + 15_000;
      while (JSON.parse((await home.ok(['queries', '--json'])).stdout).length === 0 && Date.now() < deadline);
      process.kill(pid, 'SIGUSR2');
      expect(textOf(await inFlight)).toMatch(/^DAEMON_RESTARTED/);
      expect(await gone(pid)).toBe(true);
    }
    const after = await session().call('run_query', { sql: 'SELECT 1 AS one' });
    expect(after.isError, textOf(after)).toBeFalsy();
  }, 120_000);
});

describe('a relay that reaches a daemon in its last moments tries the next one', () => {
  const { home, shim: session } = liteSession();

  it('a connection closed before the daemon said a word costs no call: it goes to a new daemon', async () => {
    const first = await session().call('run_query', { sql: 'SELECT 1 AS one' });
    expect(first.isError, textOf(first)).toBeFalsy();
    const { pid } = JSON.parse((await home.ok(['daemon', 'status', '--json'])).stdout);
    process.kill(pid, 'SIGKILL');
    expect(await gone(pid)).toBe(true);
    // A dying daemon's socket: it still accepts one connection, then closes it and stops listening.
    const socket = join(home.dir, 'run', 'daemon.sock');
    rmSync(socket, { force: true });
    const dying = createServer((conn) => {
      dying.close();
      conn.destroy();
    });
    await new Promise<void>((resolve) => dying.listen(socket, resolve));
    const closed = new Promise<void>((resolve) => dying.on('close', resolve));
    const next = await session().call('run_query', { sql: 'SELECT 1 AS one' });
    await closed;
    expect(next.isError, textOf(next)).toBeFalsy();
    expect(next.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
  }, 60_000);
});
