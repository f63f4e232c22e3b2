/**
 * A tool call's arguments are bounded before anything walks them: megabytes of `[{},{},…]`, of
 * numbers, or of nesting in any argument are refused with invalid params naming the limit, and
 * the daemon keeps answering `GET /v1/health` meanwhile (an outside review saw health wait 27 s
 * behind one 8 MB call, which never got an answer). Raw lines through the real relay and
 * straight on the daemon's socket, to the real daemon.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, TestHome } from '../helpers/hanactl-home.js';
import { rawRequest, socketOf } from '../reliability/helpers/daemon-api.js';
import { disposeHome, startLiteDaemon } from '../reliability/helpers/lite-daemon.js';

type Answer = { id?: unknown; result?: { isError?: boolean; content?: { text?: string }[] }; error?: { code: number; message: string } };

/** A peer writing raw lines and awaiting each answer by its id. */
class Lines {
  readonly #waiting = new Map<number, (a: Answer) => void>();
  constructor(
    readonly write: (line: string) => void,
    input: NodeJS.ReadableStream,
  ) {
    createInterface({ input, crlfDelay: Infinity }).on('line', (line) => {
      const answer = JSON.parse(line) as Answer;
      if (typeof answer.id === 'number') this.#waiting.get(answer.id)?.(answer);
    });
  }
  send(id: number, line: string): Promise<Answer> {
    return new Promise((resolve) => {
      this.#waiting.set(id, resolve);
      this.write(`${line}\n`);
    });
  }
  async open(): Promise<void> {
    const init = await this.send(
      1,
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
    );
    expect(init.result).toBeDefined();
    this.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  }
}

/** Just under the 8 MiB a line may carry, and 2 MB. */
const SIZES = [2_000_000, 8_000_000] as const;
const repeat = (unit: string, bytes: number) =>
  Array(Math.floor(bytes / (unit.length + 1)))
    .fill(unit)
    .join(',');
/** Distinct members `"a0":0,"a1":0,…` filling about `bytes` (JSON.parse keeps one of each name). */
const members = (bytes: number) => {
  const out: string[] = [];
  for (let n = 0, size = 0; size < bytes; n++) {
    const member = `"a${n}":0`;
    out.push(member);
    size += member.length + 1;
  }
  return out.join(',');
};
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const VALUES = /holds more than 10000 values/;
const DEEP = /nests arrays and objects more than 32 deep/;
const tool = (name: string, args: string) => (id: number) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`;
const run = (args: string) => tool('run_query', args);
const request = (method: string, params: string) => (id: number) => `{"jsonrpc":"2.0","id":${id},"method":"${method}","params":${params}}`;

/** [what, line for an id, kind of answer, its text]: a tool call answers isError, another request invalid params. */
const HOSTILE: readonly (readonly [string, (id: number) => string, 'tool' | 'rpc', RegExp])[] = [
  ...SIZES.flatMap((size) => [
    [`${size / 1e6} MB of empty objects in params`, run(`{"sql":"SELECT 1","params":[${repeat('{}', size)}]}`), 'tool', VALUES] as const,
    [`${size / 1e6} MB of numbers in params`, run(`{"sql":"SELECT 1","params":[${repeat('1', size)}]}`), 'tool', VALUES] as const,
  ]),
  ['4 MB of arguments', run(`{"sql":"SELECT 1",${members(4_000_000)}}`), 'tool', VALUES],
  ['arrays nested a million deep in params', run(`{"sql":"SELECT 1","params":[${'['.repeat(1e6)}${']'.repeat(1e6)}]}`), 'tool', DEEP],
  ['objects nested 100 000 deep in connection', run(`{"sql":"SELECT 1","connection":${nested(100_000)}}`), 'tool', DEEP],
  ['1001 parameter values', run(`{"sql":"SELECT 1","params":[${repeat('1', 2002)}]}`), 'tool', /params holds at most 1000 values/],
  ['5000 parameter values', run(`{"sql":"SELECT 1","params":[${repeat('1', 10_000)}]}`), 'tool', /maximum of 1024 elements/],
  ["2000 members in a catalog tool's arguments", tool('describe_table', `{${members(16_000)}}`), 'tool', /maximum of 1024 elements/],
  ["a catalog tool's argument nested 50 000 deep", tool('describe_table', `{"table":${nested(50_000)}}`), 'tool', DEEP],
  ["2000 members in a curated tool's arguments", tool('name_of', `{${members(16_000)}}`), 'tool', /maximum of 1024 elements/],
  ["a curated tool's argument nested 50 000 deep", tool('name_of', `{"id":${nested(50_000)}}`), 'tool', DEEP],
  ['a prompt argument nested 100 000 deep', request('prompts/get', `{"name":"x","arguments":${nested(100_000)}}`), 'rpc', DEEP],
  ['a resource read with 2 MB of members', request('resources/read', `{"uri":"x",${members(2_000_000)}}`), 'rpc', VALUES],
];

describe('the daemon keeps answering health while it refuses oversized tool arguments', () => {
  const home = new TestHome();
  const data = mkdtempSync(join(tmpdir(), 'hanactl-argument-bounds-'));
  let socket: string;
  let relay: ChildProcessWithoutNullStreams | undefined;
  let direct: Socket | undefined;
  const peers: [string, Lines][] = [];

  beforeAll(async () => {
    await startLiteDaemon(home, data);
    writeFileSync(
      join(data, 'tools.yaml'),
      'tools:\n  - name: name_of\n    description: The name of a row.\n    sql: SELECT name FROM t WHERE id = :id\n    parameters:\n      - {name: id, type: integer}\n',
    );
    await home.ok(['tools', 'import', 'lite', join(data, 'tools.yaml')]);
    socket = socketOf(home);
    relay = spawn(process.execPath, [BIN, 'mcp', '--connection', 'lite'], { env: home.env });
    const viaRelay = new Lines((line) => relay?.stdin.write(line), relay.stdout);
    const s = (direct = connect(socket));
    await new Promise<void>((resolve, reject) => s.once('connect', resolve).once('error', reject));
    s.write(`${JSON.stringify({ hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, cwd: data, connection: 'lite' })}\n`);
    const onSocket = new Lines((line) => s.write(line), s);
    await Promise.all([viaRelay.open(), onSocket.open()]);
    peers.push(['relay', viaRelay], ['socket', onSocket]);
  });
  afterAll(async () => {
    direct?.destroy();
    relay?.kill('SIGKILL');
    await disposeHome(home, data);
  });

  it('answers every hostile call with invalid params naming a limit, and health throughout', { timeout: 120_000 }, async () => {
    let calling = true;
    const health: number[] = [];
    const poll = (async () => {
      while (calling) {
        const res = await rawRequest(socket, { method: 'GET', path: '/v1/health' });
        expect(res.status).toBe(200);
        health.push(res.ms);
      }
    })();
    const answers: { what: string; kind: string; text: RegExp; answer: Answer }[] = [];
    let id = 10;
    try {
      for (const [where, peer] of peers)
        for (const [what, line, kind, text] of HOSTILE)
          answers.push({ what: `${what} (${where})`, kind, text, answer: await peer.send(id, line(id++)) });
    } finally {
      calling = false;
      await poll;
    }
    health.sort((a, b) => a - b);
    const worst = health[health.length - 1] ?? 0;
    console.log(`[argument-bounds] ${health.length} health answers, worst ${worst.toFixed(1)} ms`);
    for (const { what, kind, text, answer } of answers) {
      if (kind === 'tool') {
        expect(answer.result?.isError, what).toBe(true);
        expect(answer.result?.content?.[0]?.text, what).toMatch(text);
      } else {
        expect(answer.error, what).toMatchObject({ code: -32602, message: expect.stringMatching(text) });
      }
    }
    expect(health.length).toBeGreaterThan(0);
    expect(worst).toBeLessThan(1000);
    // The session still serves a call with as many parameter values as run_query takes.
    for (const [where, peer] of peers) {
      const ok = await peer.send(id, run(`{"sql":"SELECT ${'?,'.repeat(999)}?","params":[${repeat('1', 2000)}]}`)(id++));
      expect(ok.result?.isError, `${where}: ${ok.result?.content?.[0]?.text}`).toBeFalsy();
      const curated = await peer.send(id, tool('name_of', '{"id":1}')(id++));
      expect(curated.result?.content?.[0]?.text, where).toContain('a');
      expect(curated.result?.isError, where).toBeFalsy();
    }
  });
});
