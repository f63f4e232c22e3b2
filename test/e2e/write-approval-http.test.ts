import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';
import { createToken, startHttpDaemon } from '../helpers/mcp-http.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

describe('writes approved by a person over MCP over HTTP, on SQLite', () => {
  const home = new TestHome();
  const file = join(home.dir, 'shop.db');
  const clients: Client[] = [];
  let url: string;
  let token: string;

  const ids = (): number[] => {
    const db = new Database(file, { readonly: true });
    try {
      return (db.prepare('SELECT id FROM items ORDER BY id').all() as { id: number }[]).map((r) => r.id);
    } finally {
      db.close();
    }
  };

  const connect = async (name: string, elicitation: boolean): Promise<Client> => {
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    const client = new Client({ name, version: '1.0.0' }, elicitation ? { capabilities: { elicitation: {} } } : {});
    if (elicitation) client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { approve: true } }));
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const { base } = await startHttpDaemon(home);
    const db = new Database(file);
    db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, note TEXT)');
    db.close();
    await home.ok(['add', 'shop', `sqlite:${file}`, '--allow-write']);
    await home.ok(['set', 'shop', '--approve-writes']);
    token = await createToken(home, 'approvals');
    url = `${base}/mcp/shop`;
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await home.dispose();
  });

  it('never asks the client over HTTP, which may be any program holding the token: only the terminal approves', async () => {
    const editor = await connect('http-editor', true);
    let asked = 0;
    editor.setRequestHandler(ElicitRequestSchema, async () => {
      asked++;
      return { action: 'accept', content: { approve: true } };
    });
    let found!: (id: string) => void;
    const waiting = new Promise<string>((r) => (found = r));
    const result = editor.callTool({ name: 'run_query', arguments: { sql: "INSERT INTO items VALUES (1, 'yes')" } }, CallToolResultSchema, {
      resetTimeoutOnProgress: true,
      onprogress: (p) => {
        const id = /awaits a person's approval \(query id (\w+)\)/.exec(p.message ?? '')?.[1];
        if (id) found(id);
      },
    });
    const id = await waiting;
    expect(ids()).toEqual([]);
    await home.ok(['approve', id]);
    const done = (await result) as CallToolResult;
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(textOf(done)).toMatch(/A person approved this write in the terminal/);
    expect(asked).toBe(0);
    expect(ids()).toEqual([1]);
  });

  it('waits for the terminal where the client has no elicitation, and says so in progress', async () => {
    const plain = await connect('http-plain', false);
    let found!: (id: string) => void;
    const waiting = new Promise<string>((r) => (found = r));
    const result = plain.callTool(
      { name: 'run_query', arguments: { sql: "INSERT INTO items VALUES (2, 'terminal')" } },
      CallToolResultSchema,
      {
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          const id = /awaits a person's approval \(query id (\w+)\)/.exec(p.message ?? '')?.[1];
          if (id) found(id);
        },
      },
    );
    const id = await waiting;
    expect(ids()).toEqual([1]);
    await home.ok(['approve', id]);
    const done = (await result) as CallToolResult;
    expect(done.isError, textOf(done)).toBeFalsy();
    expect(ids()).toEqual([1, 2]);
  });
});
