import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolvePaths } from '../../shared/paths.js';
import { RunningQueryListSchema } from '../../shared/schemas.js';
import { endChildrenAfterEach, track, waitForOutput } from '../helpers/children.js';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';
import { startShim, textOf } from '../helpers/mcp-client.js';

endChildrenAfterEach();

/** A SQLite read that runs for minutes unless cancelled. */
const LONG = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 5000000000) SELECT count(*) AS c FROM n';

/** One raw relay connection on the daemon socket: lines in, lines out, as `hanactl mcp` speaks it. */
function rawRelay(
  socketPath: string,
  connection: string,
): { socket: Socket; send(msg: unknown): void; lines: () => string[]; next(pattern: RegExp): Promise<string> } {
  const socket = connect(socketPath);
  let seen = '';
  socket.on('data', (d) => (seen += d));
  const hello = { hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, cwd: REPO, connection };
  socket.write(`${JSON.stringify(hello)}\n`);
  return {
    socket,
    send: (msg) => socket.write(`${JSON.stringify(msg)}\n`),
    lines: () => seen.split('\n').filter(Boolean),
    next: async (pattern) => {
      await waitForOutput(socket, pattern, () => seen);
      return seen.split('\n').find((l) => pattern.test(l)) as string;
    },
  };
}

describe('a daemon that stops', () => {
  const home = new TestHome();
  const paths = resolvePaths(home.env);

  beforeAll(async () => {
    const Database = createRequire(import.meta.url)('better-sqlite3-multiple-ciphers');
    new Database(join(home.dir, 'stop.db')).close();
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'stop.db')}`]);
  });
  afterAll(() => home.dispose());

  it('answers a call that reaches it while it stops with a retryable error at once, and runs it not', async () => {
    const relay = rawRelay(paths.socket, 'lite');
    try {
      relay.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      });
      await relay.next(/"id":1,"result"/);
      relay.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      relay.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'run_query', arguments: { sql: LONG } } });
      // The long call is running: the stop has one to wait for.
      for (;;) {
        const { queries } = RunningQueryListSchema.parse(JSON.parse((await home.ok(['queries', '--json'])).stdout));
        expect(relay.lines().some((l) => l.includes('"id":2,'))).toBe(false);
        if (queries.some((q) => q.sql.startsWith('WITH RECURSIVE'))) break;
      }
      const stopping = home.run(['daemon', 'stop']);
      const bye = JSON.parse(await relay.next(/\{"hanactl":"bye"/));
      expect(bye).toEqual({ hanactl: 'bye', running: [2] }); // the long call: the only one it still answers
      // A request sent after the bye (a client that ignores it, or one that crossed it on the wire).
      const sentAt = performance.now();
      relay.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'run_query', arguments: { sql: 'SELECT 42 AS answer' } } });
      relay.send({ jsonrpc: '2.0', id: 4, method: 'tools/list' });
      const refused = JSON.parse(await relay.next(/"id":3,/));
      const refusedAfterMs = performance.now() - sentAt;
      expect(refused.result.isError).toBe(true);
      expect(refused.result.content[0].text).toMatch(/daemon is stopping and runs no new call; retry the call/);
      expect(JSON.parse(await relay.next(/"id":4,/)).error.message).toMatch(/stopping/);
      // Refused while the long call still runs: not queued behind it, and not run.
      expect(relay.lines().some((l) => l.includes('"id":2,'))).toBe(false);
      expect(refusedAfterMs).toBeLessThan(2_000);
      expect(relay.lines().some((l) => l.includes('42'))).toBe(false);
      relay.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'test done' } });
      // The long call, cancelled (MCP answers a cancelled request with nothing), no longer holds the stop for its 10 s drain.
      const cancelledAt = performance.now();
      expect((await stopping).code).toBe(0);
      expect(performance.now() - cancelledAt).toBeLessThan(8_000);
    } finally {
      relay.socket.destroy();
    }
  });

  it('after `hanactl daemon stop`, an editor session does not start it again; it says who can, and resumes once a person did', async () => {
    await home.ok(['daemon', 'start']);
    const shim = await startShim(home.env, ['--connection', 'lite'], 'stopped-client');
    try {
      expect((await shim.call('run_query', { sql: 'SELECT 1 AS one' })).isError).toBeFalsy();
      const stopped = await home.ok(['daemon', 'stop']);
      expect(stopped.stdout).toContain(
        `Agents' sessions will not start it again; \`HANACTL_HOME=${home.dir} node ${BIN} daemon start\` does.`,
      );
      const refused = await shim.call('run_query', { sql: 'SELECT 1 AS one' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^DAEMON_STOPPED: The hanactl daemon for .+ was stopped on purpose at .+ UTC/);
      expect(textOf(refused)).toContain(`\`HANACTL_HOME=${home.dir} node ${BIN} daemon start\``);
      expect((await home.run(['daemon', 'status'])).code).toBe(1); // nothing came back
      await home.ok(['daemon', 'start']);
      expect(existsSync(paths.stoppedMarker)).toBe(false);
      const again = await shim.call('run_query', { sql: 'SELECT 1 AS one' });
      expect(again.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
    } finally {
      await shim.close();
    }
  });
});

describe('the demo after Ctrl-C', () => {
  const home = new TestHome({ keyInEnv: false });
  afterAll(() => home.dispose());

  it('stays stopped: the editor config it printed gets a sentence naming `npm start`, and no daemon comes back', async () => {
    const demo = track(spawn(process.execPath, [BIN, 'demo'], { env: home.env, cwd: REPO }));
    let out = '';
    demo.stdout.on('data', (d) => (out += d));
    await waitForOutput(demo.stdout, /Stop with Ctrl-C/, () => out);
    const exited = new Promise<number | null>((r) => demo.once('exit', (code) => r(code)));
    demo.kill('SIGINT');
    expect(await exited).toBe(0);
    const shim = await startShim(home.env, ['--connection', 'demo'], 'after-demo');
    try {
      const result = await shim.call('list_connections');
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/stopped on purpose .*`cd \S+ && npm start`/);
    } finally {
      await shim.close();
    }
    expect((await home.run(['daemon', 'status'])).code).toBe(1);
  });
});
