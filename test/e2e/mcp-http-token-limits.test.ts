import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_SESSIONS_PER_TOKEN } from '../../daemon/mcp-http/http-sessions.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { connectHttp, createToken, rawRequest, startHttpDaemon } from '../helpers/mcp-http.js';

/**
 * Findings: a token limited to one connection still saw every connection's name, and one token
 * could fill the shared MCP over HTTP session limit. The real daemon with MCP over HTTP, the SDK's
 * real client and raw initialize requests.
 */
describe('MCP over HTTP: what one token sees and holds', () => {
  const home = new TestHome();
  let port: number;
  let base: string;
  let narrow: string;
  let wide: string;
  let greedy: string;

  beforeAll(async () => {
    ({ port, base } = await startHttpDaemon(home));
    await home.ok(['add', '--no-test', 'visible-db', 'sqlite::memory:']);
    await home.ok(['add', '--no-test', 'secret-payroll', 'sqlite::memory:']);
    await home.ok(['add', '--no-test', 'secret-hr', 'sqlite::memory:']);
    narrow = await createToken(home, 'narrow', 'visible-db');
    wide = await createToken(home, 'wide');
    greedy = await createToken(home, 'greedy');
  });
  afterAll(() => home.dispose());

  it('a token limited to one connection lists only that one, and no tool or error names another', async () => {
    const session = await connectHttp(`${base}/mcp/visible-db`, narrow);
    try {
      const outputs: string[] = [];
      const listed = await session.call('list_connections');
      outputs.push(textOf(listed), JSON.stringify(listed.structuredContent));
      expect(listed.isError).toBeFalsy();
      expect(textOf(listed)).toContain('visible-db');
      for (const [tool, args] of [
        ['current_connection', {}],
        ['run_query', { sql: 'SELECT 1', connection: 'no-such-db' }],
        ['list_tables', { connection: 'no-such-db' }],
        ['describe_table', { table: 't', connection: 'no-such-db' }],
        ['detect_project', { path: '/' }],
        ['search_objects', { pattern: 'x', connection: 'nope' }],
        ['list_schemas', {}],
      ] as const) {
        const result = await session.client.callTool({ name: tool, arguments: args }).catch((e: Error) => ({ error: e.message }));
        outputs.push(JSON.stringify(result));
      }
      expect(outputs.join('\n')).not.toMatch(/secret-(payroll|hr)/);
      // Nor is there an oracle: a name that exists and one that does not get the same answer.
      const probe = async (name: string) =>
        JSON.stringify(await session.call('run_query', { sql: 'SELECT 1', connection: name })).replaceAll(name, '<name>');
      expect(await probe('secret-payroll')).toBe(await probe('no-such-db'));
    } finally {
      await session.close();
    }
  });

  it('even a token for every connection sees only its URL’s connection inside a session', async () => {
    const session = await connectHttp(`${base}/mcp/visible-db`, wide);
    try {
      const listed = await session.call('list_connections');
      expect(textOf(listed)).toContain('visible-db');
      expect(textOf(listed)).not.toMatch(/secret-/);
    } finally {
      await session.close();
    }
  });

  const initialize = (token: string) =>
    rawRequest(port, '/mcp/visible-db', { host: `127.0.0.1:${port}`, authorization: `Bearer ${token}` });

  it(`one token holds at most ${DEFAULT_MAX_SESSIONS_PER_TOKEN} sessions; one more is 429 naming the limit, other tokens still get in`, async () => {
    const opened: string[] = [];
    for (let i = 0; i < DEFAULT_MAX_SESSIONS_PER_TOKEN; i++) {
      const answer = await initialize(greedy);
      expect(answer.status, answer.body).toBe(200);
      opened.push(String(answer.headers['mcp-session-id']));
    }
    const refused = await initialize(greedy);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('60');
    expect(JSON.parse(refused.body).error.message).toMatch(
      new RegExp(
        `token "greedy" already holds ${DEFAULT_MAX_SESSIONS_PER_TOKEN} MCP sessions, the limit per token \\(${DEFAULT_MAX_SESSIONS_PER_TOKEN}\\)`,
      ),
    );
    const other = await initialize(wide);
    expect(other.status).toBe(200);
  });
});
