import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

/** What a terminal or a form acts on or hides rather than shows; a line feed is allowed (each line is printed on its own). */
const HIDDEN = /(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** A client name an agent's program chose: an erase-line sequence and a right-to-left override. */
const CLIENT = 'editor\u001b[2K\u202eclient';
const CLIENT_SHOWN = 'editor\\x1b[2K\\u202eclient';

/** One write (the escape and the CR sit inside a line comment) that a raw terminal shows as an UPDATE only. */
const TRICK = "DELETE FROM items -- \u001b[2K\r    UPDATE items SET label = 'b1' WHERE id = 2;";
const TRICK_SHOWN = "DELETE FROM items -- \\x1b[2K\\r    UPDATE items SET label = 'b1' WHERE id = 2;";
const TRICK_ONE_LINE = "DELETE FROM items -- \\x1b[2K\\r UPDATE items SET label = 'b1' WHERE id = 2;";

const TOOLS_YAML = `tools:
  - name: add_item
    description: Adds one item.
    sql: INSERT INTO items (id, label) VALUES (:id, :label)
    parameters:
      - {name: id, type: integer}
      - {name: label, type: string}
`;

interface Editor {
  /** Starts a tool call; `waiting` resolves with the query id once the call says it awaits a person. */
  start(name: string, args: Record<string, unknown>): { result: Promise<CallToolResult>; waiting: Promise<string> };
  /** The next question asked in the editor (left open until the terminal decides). */
  nextQuestion(): Promise<string>;
  close(): Promise<void>;
}

async function openEditor(home: TestHome): Promise<Editor> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--connection', 'shop'],
    env: home.env as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: CLIENT, version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const questions: string[] = [];
  let asked: (() => void) | undefined;
  client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
    questions.push(request.params.message);
    asked?.();
    // Left open: the terminal decides, and the question is withdrawn.
    return new Promise<ElicitResult>((resolve) =>
      extra.signal.addEventListener('abort', () => resolve({ action: 'cancel' }), { once: true }),
    );
  });
  await client.connect(transport);
  let seen = 0;
  return {
    start(name, args) {
      let found!: (id: string) => void;
      const waiting = new Promise<string>((r) => (found = r));
      const result = client.callTool({ name, arguments: args }, CallToolResultSchema, {
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          const id = /awaits a person's approval \(query id (\w+)\)/.exec(p.message ?? '')?.[1];
          if (id) found(id);
        },
      }) as Promise<CallToolResult>;
      return { result, waiting };
    },
    async nextQuestion() {
      if (questions.length <= seen) await new Promise<void>((r) => (asked = r));
      asked = undefined;
      return questions[seen++] as string;
    },
    close: () => client.close(),
  };
}

describe('what a person approves is what runs: agent text shown escaped, with its parameter values (SQLite, real daemon, shim and CLI)', () => {
  const home = new TestHome();
  let editor: Editor;
  let labels: () => string[];

  beforeAll(async () => {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items VALUES (1, 'a1'), (2, 'a2')");
    db.close();
    labels = () => {
      const reader = new Database(file, { readonly: true });
      try {
        return (reader.prepare('SELECT label FROM items ORDER BY id').all() as { label: string }[]).map((r) => r.label);
      } finally {
        reader.close();
      }
    };
    await home.ok(['add', 'shop', `sqlite:${file}`, '--no-password', '--allow-write']);
    writeFileSync(join(home.dir, 'tools.yaml'), TOOLS_YAML);
    await home.ok(['tools', 'import', 'shop', join(home.dir, 'tools.yaml')]);
    await home.ok(['set', 'shop', '--approve-writes']);
    editor = await openEditor(home);
  });

  afterAll(async () => {
    await editor?.close();
    await home.dispose();
  });

  it('shows control sequences in the statement and the client name as escapes: queries, sessions, the editor form, deny, audit', async () => {
    const { result, waiting } = editor.start('run_query', { sql: TRICK });
    const id = await waiting;
    const question = await editor.nextQuestion();

    const listed = (await home.ok(['queries'])).stdout;
    expect(listed).not.toMatch(HIDDEN);
    expect(listed).toContain(TRICK_SHOWN);
    expect(listed).toContain(CLIENT_SHOWN);
    expect(listed).toMatch(/shown as escapes/);

    for (const command of ['sessions', 'status']) {
      const shown = (await home.ok([command])).stdout;
      expect(shown, command).not.toMatch(HIDDEN);
      expect(shown, command).toContain(CLIENT_SHOWN);
    }

    // --json keeps the text itself, every such character written as a JSON escape.
    const json = (await home.ok(['queries', '--json'])).stdout;
    expect(json).not.toMatch(HIDDEN);
    const waitingWrite = JSON.parse(json).queries.find((q: { id: string }) => q.id === id);
    expect(waitingWrite).toMatchObject({ sql: TRICK, client: CLIENT, params: [] });

    expect(question).not.toMatch(HIDDEN);
    expect(question).toContain(TRICK_SHOWN);

    const denied = (await home.ok(['deny', id])).stdout;
    expect(denied).not.toMatch(HIDDEN);
    expect(denied).toContain(TRICK_ONE_LINE);
    expect(textOf(await result)).toMatch(/^WRITE_DENIED/);
    expect(labels()).toEqual(['a1', 'a2']);

    const audit = (await home.ok(['audit'])).stdout;
    expect(audit).not.toMatch(HIDDEN);
    expect(audit).toContain(TRICK_ONE_LINE);
    expect(audit).toContain(CLIENT_SHOWN);
    expect((await home.ok(['audit', '--json'])).stdout).not.toMatch(HIDDEN);
  });

  it('shows the bound parameter values wherever the write is shown for approval, and in its audit record', async () => {
    const { result, waiting } = editor.start('run_query', { sql: 'DELETE FROM items WHERE label LIKE ?', params: ['%'] });
    const id = await waiting;
    const question = await editor.nextQuestion();
    expect(question).toMatch(/DELETE FROM items WHERE label LIKE \?[\s\S]*parameter 1: "%"/);
    const listed = (await home.ok(['queries'])).stdout;
    expect(listed).toMatch(/DELETE FROM items WHERE label LIKE \?\n\s+parameter 1: "%"/);
    const { queries } = JSON.parse((await home.ok(['queries', '--json'])).stdout);
    expect(queries.find((q: { id: string }) => q.id === id)).toMatchObject({ params: ['"%"'] });
    const denied = await home.ok(['deny', id]);
    expect(denied.stdout).toContain('DELETE FROM items WHERE label LIKE ?; parameter 1: "%"');
    await result;
    expect(labels()).toEqual(['a1', 'a2']);
    const { records } = JSON.parse((await home.ok(['audit', '--json'])).stdout);
    expect(records.find((r: { queryId: string }) => r.queryId === id)).toMatchObject({ approval: { decision: 'denied', params: ['"%"'] } });
    expect((await home.ok(['audit'])).stdout).toContain('DELETE FROM items WHERE label LIKE ?; parameter 1: "%"');
  });

  it('cuts a long value with a visible marker and its whole length, escaped', async () => {
    const long = `x\u001b[2K${'y'.repeat(4990)}`;
    const { result, waiting } = editor.start('run_query', { sql: 'UPDATE items SET label = ? WHERE id = ?', params: [long, 1] });
    const id = await waiting;
    const question = await editor.nextQuestion();
    const listed = (await home.ok(['queries'])).stdout;
    for (const shown of [listed, question]) {
      expect(shown).not.toMatch(HIDDEN);
      expect(shown).toMatch(/parameter 1: "x\\u001b\[2Ky+"… \(cut; 4995 characters in all\)\n\s*parameter 2: 1/);
    }
    const approved = await home.ok(['approve', id]);
    expect(approved.stdout).toMatch(/Approved \w+ on shop: it runs now\. \(UPDATE items SET label = \? WHERE id = \?; parameter 1: "x/);
    expect((await result).isError).toBeFalsy();
    expect(labels()[0]).toBe(long);
  });

  it("shows a curated tool's arguments, bound as parameters", async () => {
    const { result, waiting } = editor.start('add_item', { id: 9, label: 'curated\u202e' });
    const id = await waiting;
    await editor.nextQuestion();
    const listed = (await home.ok(['queries'])).stdout;
    expect(listed).not.toMatch(HIDDEN);
    expect(listed).toMatch(/parameter 1: 9\n\s+parameter 2: "curated\\u202e"/);
    const denied = JSON.parse((await home.ok(['deny', id, '--json'])).stdout);
    expect(denied).toMatchObject({ id, params: ['9', '"curated\\u202e"'] });
    expect(textOf(await result)).toMatch(/^WRITE_DENIED/);
  });
});
