import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';
import { startShim, textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);

interface StatusSession {
  id: string;
  pid?: number;
  client: { name: string };
  connection: string | null;
}

/**
 * The relay (`hanactl mcp`, bin/hanactl-mcp) and its MCP session in the daemon: the session
 * lives as long as the relay's socket, survives a daemon restart with the connection it had
 * chosen, and is named even when the client never says who it is.
 */
describe('relay sessions', () => {
  const home = new TestHome();
  const data = mkdtempSync(join(tmpdir(), 'hanactl-relay-'));
  const children: ChildProcessWithoutNullStreams[] = [];

  const sessions = async (): Promise<StatusSession[]> =>
    (JSON.parse((await home.ok(['status', '--json'])).stdout) as { sessions: StatusSession[] }).sessions;
  /** Polls `hanactl status` until `found` holds (each poll is a full CLI round trip). */
  const until = async (found: (list: StatusSession[]) => boolean, what: string): Promise<StatusSession[]> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const list = await sessions();
      if (found(list)) return list;
      if (Date.now() > deadline) throw new Error(`${what}; sessions: ${JSON.stringify(list)}`);
    }
  };

  beforeAll(async () => {
    const Database = require('better-sqlite3-multiple-ciphers');
    for (const name of ['a', 'b']) {
      const db = new Database(join(data, `${name}.db`));
      db.exec(`CREATE TABLE which (name TEXT); INSERT INTO which VALUES ('${name}');`);
      db.close();
      await home.ok(['add', '--no-test', `lite-${name}`, `sqlite:${join(data, `${name}.db`)}`]);
    }
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await home.dispose();
    rmSync(data, { recursive: true, force: true });
  });

  it('keeps the connection the agent chose across a daemon restart, under the same session', async () => {
    const shim = await startShim(home.env, ['--connection', 'lite-a'], 'resume-client');
    try {
      expect(textOf(await shim.call('use_connection', { name: 'lite-b' }))).toMatch(/Now using "lite-b"/);
      const [before] = (await sessions()).filter((s) => s.client.name === 'resume-client');
      expect(before?.connection).toBe('lite-b');
      // A stop and start by a person (a stopped daemon is not started again for an agent).
      await home.ok(['daemon', 'stop']);
      await home.ok(['daemon', 'start']);
      // The next call reconnects, replays the handshake and resumes.
      const current = await shim.call('current_connection');
      expect(textOf(current)).toMatch(/Active: "lite-b"/);
      const rows = await shim.call('run_query', { sql: 'SELECT name FROM which' });
      expect(rows.structuredContent).toMatchObject({ rows: [{ name: 'b' }] });
      const after = (await sessions()).filter((s) => s.client.name === 'resume-client');
      expect(after.map((s) => s.id)).toEqual([before?.id]);
      expect(after[0]?.connection).toBe('lite-b');
      expect(shim.stderr()).toBe('');
    } finally {
      await shim.close();
    }
  });

  it('leaves `hanactl status` when the relay goes, and names a client that never said who it is', async () => {
    // A raw stdio client: the relay started by hand, no initialize sent.
    const relay = spawn(process.execPath, [BIN, 'mcp', '--connection', 'lite-a'], { env: home.env, cwd: REPO });
    children.push(relay);
    const listed = await until((l) => l.some((s) => s.pid === relay.pid), 'the raw relay is listed');
    const raw = listed.find((s) => s.pid === relay.pid) as StatusSession;
    expect(raw.client.name).not.toBe('unknown');
    expect(raw.client.name).toMatch(/stdio/);
    expect(raw.connection).toBe('lite-a');
    relay.stdin.end();
    await new Promise((r) => relay.once('exit', r));
    await until((l) => !l.some((s) => s.id === raw.id), 'the ended session is dropped');
  });

  it('keeps sessions apart: one relay switching connection does not move another', async () => {
    const one = await startShim(home.env, ['--connection', 'lite-a'], 'apart-1');
    const two = await startShim(home.env, ['--connection', 'lite-a'], 'apart-2');
    try {
      await one.call('use_connection', { name: 'lite-b' });
      expect((await one.call('run_query', { sql: 'SELECT name FROM which' })).structuredContent).toMatchObject({ rows: [{ name: 'b' }] });
      expect((await two.call('run_query', { sql: 'SELECT name FROM which' })).structuredContent).toMatchObject({ rows: [{ name: 'a' }] });
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  });

  it('writes only JSON-RPC to stdout, and answers garbage with JSON-RPC errors without losing the session', async () => {
    const relay = spawn(process.execPath, [BIN, 'mcp'], { env: home.env, cwd: REPO });
    children.push(relay);
    let out = '';
    relay.stdout.on('data', (d) => (out += d));
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    relay.stdin.write(`${JSON.stringify(init)}\nnot json at all\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n`);
    // Messages the SDK's protocol layer would drop without a word: each gets JSON-RPC's own error.
    relay.stdin.write('{"__proto__":{},"jsonrpc":"2.0","id":7,"method":"ping"}\n');
    relay.stdin.write('{"jsonrpc":"2.0","id":8,"method":"ping","extra":1}\n');
    relay.stdin.write('{"jsonrpc":"2.0","id":9,"method":5}\n');
    relay.stdin.write('{"jsonrpc":"1.0","id":10,"method":"ping"}\n');
    relay.stdin.write('[{"jsonrpc":"2.0","id":11,"method":"ping"}]\n');
    relay.stdin.write('42\n');
    relay.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'two', method: 'tools/list' })}\n`);
    const deadline = Date.now() + 15_000;
    while (!out.includes('"id":"two"') && Date.now() < deadline) await new Promise((r) => relay.stdout.once('data', r));
    relay.stdin.end();
    await new Promise((r) => relay.once('exit', r));
    const messages = out
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    for (const m of messages) expect(m).toMatchObject({ jsonrpc: '2.0' });
    const byId = (id: unknown) => messages.filter((m) => m.id === id);
    expect(byId(1)[0].result.serverInfo).toBeDefined();
    expect(byId('two')[0].result.tools.length).toBeGreaterThan(5);
    expect(byId(7)).toEqual([
      { jsonrpc: '2.0', id: 7, error: { code: -32600, message: expect.stringMatching(/Invalid Request.*__proto__/) } },
    ]);
    expect(byId(8)).toEqual([{ jsonrpc: '2.0', id: 8, error: { code: -32600, message: expect.stringMatching(/Invalid Request.*extra/) } }]);
    for (const id of [9, 10])
      expect(byId(id)).toEqual([{ jsonrpc: '2.0', id, error: { code: -32600, message: expect.stringMatching(/^Invalid Request/) } }]);
    const anonymous = byId(null).map((m) => m.error);
    expect(anonymous).toEqual(
      expect.arrayContaining([
        { code: -32700, message: expect.stringMatching(/^Parse error: the line is not JSON/) },
        { code: -32600, message: expect.stringMatching(/^Invalid Request: a message must be one JSON-RPC object/) },
      ]),
    );
    expect(anonymous).toHaveLength(3);
  });

  it('answers an oversize statement with a clear error naming the limit, and the session keeps working', async () => {
    const shim = await startShim(home.env, ['--connection', 'lite-a'], 'oversize-client');
    try {
      for (const megabytes of [12, 3]) {
        const sql = `SELECT '${'x'.repeat(megabytes * 1024 * 1024)}'`;
        const result = await shim.call('run_query', { sql });
        expect(result.isError, `${megabytes} MB`).toBe(true);
        const text = textOf(result);
        expect(text, `${megabytes} MB`).toMatch(/INVALID_REQUEST|Invalid request/);
        expect(text, `${megabytes} MB`).toMatch(/1000000 characters|1 MB/);
        expect(text, `${megabytes} MB`).not.toMatch(/RESTARTED|retried/);
        const next = await shim.call('run_query', { sql: 'SELECT name FROM which' });
        expect(next.structuredContent, `after ${megabytes} MB`).toMatchObject({ rows: [{ name: 'a' }] });
      }
      expect(shim.stderr()).toBe('');
    } finally {
      await shim.close();
    }
  });
});
