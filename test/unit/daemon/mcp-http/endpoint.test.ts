import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { HttpSessions, type SessionBinding } from '../../../../daemon/mcp-http/http-sessions.js';
import { createMcpHttpApp } from '../../../../daemon/mcp-http/mcp-http-app.js';
import type { TokenGrant } from '../../../../daemon/tokens/token-service.js';
import { HanactlError } from '../../../../shared/errors.js';

const HOST = '127.0.0.1:8765';
const GRANTS: Record<string, TokenGrant> = {
  hanactl_any: { label: 'any', connection: null },
  hanactl_one: { label: 'one-only', connection: 'one' },
};
const CONNECTIONS: Record<string, string[]> = { one: ['CUSTOMER_ID'], two: [] };

/** The endpoint in-process, with fake tokens and connections, and real sessions on a tiny MCP server. */
function setup() {
  const opened: SessionBinding[] = [];
  const ended: SessionBinding[] = [];
  const sessions = new HttpSessions({
    open: (binding) => {
      opened.push(binding);
      const server = new McpServer({ name: 'fake', version: '1' });
      server.registerTool('echo', { description: 'echo' }, () => ({ content: [{ type: 'text', text: JSON.stringify(binding.context) }] }));
      return { server, heartbeat: async () => {}, end: async () => void ended.push(binding) };
    },
  });
  const app = createMcpHttpApp({
    address: { hosts: [HOST, 'localhost:8765'], origins: [`http://${HOST}`, 'http://localhost:8765'] },
    tokens: { verify: (token) => GRANTS[token] },
    describe: async (name) => {
      const context = CONNECTIONS[name];
      if (!context) throw new HanactlError('CONNECTION_NOT_FOUND', `There is no connection named "${name}".`);
      return { name, context, engine: 'sqlite' };
    },
    sessions,
  });
  const send = async (path: string, options: { headers?: Record<string, string>; body?: unknown; method?: string } = {}) => {
    const response = await app.request(`http://${HOST}${path}`, {
      method: options.method ?? 'POST',
      headers: {
        host: HOST,
        authorization: 'Bearer hanactl_any',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...options.headers,
      },
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      message: text.startsWith('{') ? (JSON.parse(text).error?.message as string | undefined) : undefined,
    };
  };
  return { app, sessions, send, opened, ended };
}

const initialize = (id = 1) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'unit', version: '1' } },
});

describe('the MCP over HTTP endpoint, in-process', () => {
  it('checks Host and Origin first (403), then the token (401), then its scope (403)', async () => {
    const { send } = setup();
    expect((await send('/mcp/one?CUSTOMER_ID=1', { headers: { host: 'evil:8765', authorization: '' } })).status).toBe(403);
    expect((await send('/mcp/one?CUSTOMER_ID=1', { headers: { origin: 'http://evil', authorization: '' } })).status).toBe(403);
    const none = await send('/mcp/one?CUSTOMER_ID=1', { headers: { authorization: '' }, body: initialize() });
    expect([none.status, none.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="hanactl"']);
    expect((await send('/mcp/one', { headers: { authorization: 'Basic abc' } })).status).toBe(401);
    const scoped = await send('/mcp/two', { headers: { authorization: 'Bearer hanactl_one' }, body: initialize() });
    expect([scoped.status, scoped.message]).toEqual([
      403,
      'The token "one-only" is limited to the connection "one"; it cannot open /mcp/two.',
    ]);
  });

  it('answers an unknown connection 404, a bad query string 400, both as JSON-RPC errors', async () => {
    const { send, opened } = setup();
    const unknown = await send('/mcp/nope', { body: initialize() });
    expect([unknown.status, unknown.message]).toEqual([404, 'There is no connection named "nope".']);
    const bad = await send('/mcp/one?CUSTOMER_ID=1&CUSTOMER_ID=2', { body: initialize() });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toEqual({
      jsonrpc: '2.0',
      error: { code: -32602, message: 'The context parameter CUSTOMER_ID is given more than once.' },
      id: null,
    });
    expect((await send('/other')).status).toBe(404);
    expect(opened).toEqual([]);
  });

  it('needs an initialize to open a session', async () => {
    const { send } = setup();
    expect((await send('/mcp/two', { method: 'GET' })).status).toBe(400);
    expect((await send('/mcp/two', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })).message).toMatch(
      /No valid session ID provided/,
    );
    const garbage = await send('/mcp/two', { headers: {}, body: undefined });
    expect(garbage.status).toBe(400);
  });

  it('opens a session bound to its connection, context values and token; later requests must match', async () => {
    const { send, sessions, opened, ended } = setup();
    const init = await send('/mcp/one?customer_id=7', { body: initialize() });
    expect(init.status).toBe(200);
    const id = init.headers.get('mcp-session-id') ?? '';
    expect(opened).toEqual([{ connection: 'one', context: { CUSTOMER_ID: '7' }, token: 'any' }]);
    const session = { 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
    expect(
      (await send('/mcp/one?customer_id=7', { headers: session, body: { jsonrpc: '2.0', method: 'notifications/initialized' } })).status,
    ).toBe(202);
    const call = await send('/mcp/one?CUSTOMER_ID=7', {
      headers: session,
      body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } },
    });
    expect(call.text).toContain('{\\"CUSTOMER_ID\\":\\"7\\"}');

    const other = await send('/mcp/one?CUSTOMER_ID=8', { headers: session, body: { jsonrpc: '2.0', id: 3, method: 'tools/list' } });
    expect([other.status, other.message]).toEqual([
      400,
      'This MCP session was opened on /mcp/one with other context values; use the URL it was opened with.',
    ]);
    const stolen = await send('/mcp/one?CUSTOMER_ID=7', {
      headers: { ...session, authorization: 'Bearer hanactl_one' },
      body: { jsonrpc: '2.0', id: 4, method: 'tools/list' },
    });
    expect([stolen.status, stolen.message]).toEqual([403, 'This MCP session was opened with another token.']);
    const gone = await send('/mcp/one?CUSTOMER_ID=7', {
      headers: { ...session, 'mcp-session-id': 'nope' },
      body: { jsonrpc: '2.0', id: 5, method: 'tools/list' },
    });
    expect(gone.status).toBe(404);

    expect(sessions.size).toBe(1);
    expect((await send('/mcp/one?CUSTOMER_ID=7', { method: 'DELETE', headers: session })).status).toBe(200);
    expect(sessions.size).toBe(0);
    expect(ended).toHaveLength(1);
  });

  it('refuses sessions past the cap with 503, and closes them all on closeAll', async () => {
    const { send, sessions, ended } = setup();
    const capped = new HttpSessions({
      maxSessions: 0,
      open: () => ({ server: new McpServer({ name: 'x', version: '1' }), heartbeat: async () => {}, end: async () => {} }),
    });
    const blocked = await capped.start({ connection: 'two', context: {}, token: 'any' }, new Request('http://x/'), initialize());
    expect(blocked.status).toBe(503);
    await send('/mcp/two', { body: initialize() });
    await send('/mcp/two', { body: initialize(2) });
    expect(sessions.size).toBe(2);
    await sessions.closeAll();
    expect(sessions.size).toBe(0);
    expect(ended).toHaveLength(2);
  });
});
