/**
 * MCP over HTTP bounds a body's values and nesting before anything parses it, as the relay's
 * socket does (argument-bounds-health.test.ts): megabytes of `[{},{},…]` or of nesting in a tool
 * call's arguments are answered invalid params naming the limit, never a stall or a 5xx, and the
 * daemon keeps answering `GET /v1/health` meanwhile. The real daemon with MCP over HTTP, raw bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { createToken, rawRequest, startHttpDaemon } from '../helpers/mcp-http.js';
import { socketOf, rawRequest as socketRequest } from '../reliability/helpers/daemon-api.js';

/** Just under the 4 MiB an MCP over HTTP body may carry. */
const BODY = 4_000_000;
const repeat = (unit: string, bytes: number) =>
  Array(Math.floor(bytes / (unit.length + 1)))
    .fill(unit)
    .join(',');
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const run = (args: string) => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_query","arguments":${args}}}`;
const VALUES = /holds more than 10000 values/;
const DEEP = /nests arrays and objects more than 32 deep/;

type Message = { id?: unknown; result?: { isError?: boolean; content?: { text?: string }[] }; error?: { code: number; message: string } };
/** The JSON-RPC message of an answer, whether plain JSON or one server-sent event. */
function messageOf(body: string): Message {
  const data = /^data: (.*)$/m.exec(body);
  return JSON.parse(data ? (data[1] as string) : body) as Message;
}

const HOSTILE: readonly (readonly [string, string, 'tool' | 'rpc', RegExp])[] = [
  ['4 MB of empty objects in params', run(`{"sql":"SELECT 1","params":[${repeat('{}', BODY)}]}`), 'tool', VALUES],
  ['4 MB of numbers in params', run(`{"sql":"SELECT 1","params":[${repeat('1', BODY)}]}`), 'tool', VALUES],
  ['arrays nested a million deep in params', run(`{"sql":"SELECT 1","params":[${'['.repeat(1e6)}${']'.repeat(1e6)}]}`), 'tool', DEEP],
  ['objects nested 100 000 deep in connection', run(`{"sql":"SELECT 1","connection":${nested(100_000)}}`), 'tool', DEEP],
  ['5000 parameter values', run(`{"sql":"SELECT 1","params":[${repeat('1', 10_000)}]}`), 'tool', /maximum of 1024 elements/],
  [
    'a prompt argument nested 100 000 deep',
    `{"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"x","arguments":${nested(100_000)}}}`,
    'rpc',
    DEEP,
  ],
];

describe('MCP over HTTP refuses oversized tool arguments, and health answers throughout', () => {
  const home = new TestHome();
  let port: number;
  let token: string;
  let session: string;
  const headers = () => ({
    host: `127.0.0.1:${port}`,
    authorization: `Bearer ${token}`,
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-06-18',
  });

  beforeAll(async () => {
    ({ port } = await startHttpDaemon(home));
    await home.ok(['add', '--no-test', 'lite', 'sqlite::memory:']);
    token = await createToken(home, 'bounds', 'lite');
    const init = await rawRequest(port, '/mcp/lite', { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` });
    expect(init.status, init.body).toBe(200);
    session = String(init.headers['mcp-session-id']);
    const initialized = await rawRequest(port, '/mcp/lite', headers(), '{"jsonrpc":"2.0","method":"notifications/initialized"}');
    expect(initialized.status).toBe(202);
  });
  afterAll(() => home.dispose());

  it('answers each with invalid params naming the limit', { timeout: 60_000 }, async () => {
    let calling = true;
    const health: number[] = [];
    const socket = socketOf(home);
    const poll = (async () => {
      while (calling) {
        const res = await socketRequest(socket, { method: 'GET', path: '/v1/health' });
        expect(res.status).toBe(200);
        health.push(res.ms);
      }
    })();
    const answers: { what: string; kind: string; text: RegExp; status: number; body: string }[] = [];
    try {
      for (const [what, body, kind, text] of HOSTILE)
        answers.push({ what, kind, text, ...(await rawRequest(port, '/mcp/lite', headers(), body)) });
      // An initialize that opens no session is bounded alike.
      const init = `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":${nested(100_000)},"clientInfo":{"name":"raw","version":"1"}}}`;
      answers.push({
        what: 'an initialize nested 100 000 deep',
        kind: 'rpc',
        text: DEEP,
        ...(await rawRequest(port, '/mcp/lite', { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` }, init)),
      });
    } finally {
      calling = false;
      await poll;
    }
    for (const { what, kind, text, status, body } of answers) {
      expect(status, what).toBeLessThan(500);
      const message = messageOf(body);
      if (kind === 'tool') {
        expect(message.result?.isError, what).toBe(true);
        expect(message.result?.content?.[0]?.text, what).toMatch(text);
      } else {
        expect(message.error, what).toMatchObject({ code: -32602, message: expect.stringMatching(text) });
      }
    }
    health.sort((a, b) => a - b);
    expect(health.length).toBeGreaterThan(0);
    expect(health[health.length - 1]).toBeLessThan(1000);
    // The session still serves a call with as many parameter values as run_query takes.
    const ok = messageOf(
      (await rawRequest(port, '/mcp/lite', headers(), run(`{"sql":"SELECT ${'?,'.repeat(999)}?","params":[${repeat('1', 2000)}]}`))).body,
    );
    expect(ok.result?.isError, JSON.stringify(ok).slice(0, 300)).toBeFalsy();
  });
});
