import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, CallToolResultSchema, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { BIN, TestHome } from '../helpers/hanactl-home.js';
import { textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

/** Unique per run: the database servers are shared. */
const TABLE = `approval_items_${randomBytes(3).toString('hex')}`;

/** The ids (in order) of the rows in TABLE, read straight from the database, not through hanactl. */
type ReadIds = () => Promise<number[]>;

interface Engine {
  readonly name: string;
  readonly available: boolean;
  /** Creates TABLE (id, note); returns the URL to register and a reader of its ids. */
  setUp(home: TestHome): Promise<{ url: string; ids: ReadIds }>;
  tearDown(): Promise<void>;
}

const sqliteEngine: Engine = {
  name: 'SQLite',
  available: true,
  async setUp(home) {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, note TEXT)`);
    db.close();
    const ids: ReadIds = async () => {
      const reader = new Database(file, { readonly: true });
      try {
        return (reader.prepare(`SELECT id FROM ${TABLE} ORDER BY id`).all() as { id: number }[]).map((r) => r.id);
      } finally {
        reader.close();
      }
    };
    return { url: `sqlite:${file}`, ids };
  },
  async tearDown() {},
};

const pgAvailable = await serverAvailable('postgres');
const pgRun = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
};
const postgresEngine: Engine = {
  name: 'PostgreSQL',
  available: pgAvailable,
  async setUp() {
    await pgRun((c) => c.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, note text)`));
    const ids: ReadIds = () => pgRun(async (c) => (await c.query(`SELECT id FROM ${TABLE} ORDER BY id`)).rows.map((r) => Number(r.id)));
    return { url: PG_URL, ids };
  },
  tearDown: () => pgRun(async (c) => void (await c.query(`DROP TABLE IF EXISTS ${TABLE}`))),
};

const myAvailable = await serverAvailable('mysql');
const myRun = async <T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> => {
  const u = new URL(MYSQL_URL);
  const conn = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    database: u.pathname.slice(1),
  });
  try {
    return await fn(conn);
  } finally {
    await conn.end();
  }
};
const mariadbEngine: Engine = {
  name: 'MariaDB',
  available: myAvailable,
  async setUp() {
    await myRun((c) => c.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, note text)`));
    const ids: ReadIds = () =>
      myRun(async (c) => ((await c.query(`SELECT id FROM ${TABLE} ORDER BY id`))[0] as { id: number }[]).map((r) => Number(r.id)));
    return { url: MYSQL_URL.replace(/^mysql:/, 'mariadb:'), ids };
  },
  tearDown: () => myRun(async (c) => void (await c.query(`DROP TABLE IF EXISTS ${TABLE}`))),
};

const TOOLS_YAML = `tools:
  - name: add_item
    description: Adds one item.
    sql: INSERT INTO ${TABLE} (id, note) VALUES (:id, :note)
    parameters:
      - {name: id, type: integer}
      - {name: note, type: string}
`;

/** An SDK Client on the real shim; with `answer`, it declares elicitation and answers with it. */
interface Session {
  readonly client: Client;
  /** Starts a tool call; `waiting` resolves with the query id once the call says it awaits a person. */
  start(name: string, args: Record<string, unknown>): { result: Promise<CallToolResult>; waiting: Promise<string>; told: Promise<string> };
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** The questions the editor was asked. */
  readonly asked: string[];
  close(): Promise<void>;
}

async function openSession(
  home: TestHome,
  clientName: string,
  answer?: (message: string, withdrawn: AbortSignal, requestId: string | number) => ElicitResult | Promise<ElicitResult>,
): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--connection', 'shop'],
    env: home.env as Record<string, string>,
    stderr: 'pipe',
  });
  const client = new Client({ name: clientName, version: '1.0.0' }, answer ? { capabilities: { elicitation: {} } } : {});
  const asked: string[] = [];
  if (answer) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      asked.push(request.params.message);
      return answer(request.params.message, extra.signal, extra.requestId);
    });
  }
  await client.connect(transport);
  const start = (name: string, args: Record<string, unknown>) => {
    let found!: (id: string) => void;
    let say!: (message: string) => void;
    const waiting = new Promise<string>((r) => (found = r));
    const told = new Promise<string>((r) => (say = r));
    const result = client.callTool({ name, arguments: args }, CallToolResultSchema, {
      resetTimeoutOnProgress: true,
      onprogress: (p) => {
        const id = /awaits a person's approval \(query id (\w+)\)/.exec(p.message ?? '')?.[1];
        if (!id) return;
        say(p.message as string);
        found(id);
      },
    }) as Promise<CallToolResult>;
    return { result, waiting, told };
  };
  return {
    client,
    start,
    call: (name, args) => start(name, args).result,
    asked,
    close: () => client.close(),
  };
}

interface AuditedApproval {
  queryId: string;
  statement: string;
  outcome: string;
  errorCode: string | null;
  approval: { decision: string; by: string | null; who: string | null; reason: string | null } | null;
}

describe.each([sqliteEngine, postgresEngine, mariadbEngine])(
  'writes approved by a person on $name, through the real shim and daemon',
  (engine) => {
    const home = new TestHome();
    let ids: ReadIds;
    let terminal: Session;
    const insert = (id: number, note: string) => ({ sql: `INSERT INTO ${TABLE} (id, note) VALUES (${id}, '${note}')` });
    const audited = async (queryId: string): Promise<AuditedApproval | undefined> =>
      (JSON.parse((await home.ok(['audit', '--json'])).stdout).records as AuditedApproval[]).find((r) => r.queryId === queryId);

    beforeAll(async () => {
      if (!engine.available) return;
      const setUp = await engine.setUp(home);
      ids = setUp.ids;
      await home.ok(['add', 'shop', setUp.url, '--no-password', '--allow-write']);
      writeFileSync(join(home.dir, 'tools.yaml'), TOOLS_YAML);
      await home.ok(['tools', 'import', 'shop', join(home.dir, 'tools.yaml')]);
      await home.ok(['set', 'shop', '--approve-writes']);
      terminal = await openSession(home, 'terminal-only-client');
    });

    afterAll(async () => {
      await terminal?.close();
      await home.dispose();
      if (engine.available) await engine.tearDown();
    });

    it.skipIf(!engine.available)('is a setting of a writable connection, shown by list --json; a read-only one says why not', async () => {
      const { connections } = JSON.parse((await home.ok(['list', '--json'])).stdout);
      expect(connections.find((c: { name: string }) => c.name === 'shop')).toMatchObject({ allowWrite: true, approveWrites: true });
      expect((await home.ok(['list'])).stdout).toMatch(/read-write \(writes approved\)/);
      // The agent learns it before it sends a write.
      expect(textOf(await terminal.call('current_connection', {}))).toMatch(/read-write, each write waits for a person's approval/);
      new Database(join(home.dir, 'ro.db')).close();
      await home.ok(['add', 'ro', `sqlite:${join(home.dir, 'ro.db')}`]);
      const refused = await home.run(['set', 'ro', '--approve-writes']);
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/"ro" is read-only.*nothing to approve.* set ro --allow-write --approve-writes`/);
    });

    it.skipIf(!engine.available)('holds a write until `hanactl approve`; reads pass meanwhile; the write then really runs', async () => {
      const { result, waiting } = terminal.start('run_query', insert(1, 'approved'));
      const id = await waiting;
      // Waiting, it has not run, and a client without elicitation was asked nothing and approved nothing.
      expect(await ids()).toEqual([]);
      const read = await terminal.call('run_query', { sql: `SELECT COUNT(*) AS n FROM ${TABLE}` });
      expect(read.isError, textOf(read)).toBeFalsy();
      const { queries } = JSON.parse((await home.ok(['queries', '--json'])).stdout);
      const listed = queries.find((q: { id: string }) => q.id === id);
      expect(listed).toMatchObject({
        connection: 'shop',
        client: 'terminal-only-client',
        tool: 'run_query',
        sql: insert(1, 'approved').sql,
      });
      expect(listed.awaitingApproval.timeoutSeconds).toBe(300);
      expect(listed.awaitingApproval.leftMs).toBeGreaterThan(200_000);
      expect((await home.ok(['queries'])).stdout).toContain(insert(1, 'approved').sql);
      expect(await ids()).toEqual([]);

      expect((await home.ok(['approve', id])).stdout).toMatch(new RegExp(`Approved ${id} on shop`));
      const done = await result;
      expect(done.isError, textOf(done)).toBeFalsy();
      expect(textOf(done)).toMatch(/A person approved this write in the terminal/);
      expect(await ids()).toEqual([1]);
      const record = await audited(id);
      expect(record).toMatchObject({ outcome: 'ok', approval: { decision: 'approved', by: 'cli', who: userInfo().username } });
      expect((await home.ok(['audit'])).stdout).toMatch(/ok, approved by cli/);
    });

    it.skipIf(!engine.available)('never runs a write a person denied, and tells the agent why', async () => {
      const { result, waiting } = terminal.start('run_query', insert(2, 'denied'));
      const id = await waiting;
      await home.ok(['deny', id, '--reason', 'not on a Friday']);
      const done = await result;
      expect(done.isError).toBe(true);
      expect(textOf(done)).toMatch(new RegExp(`^WRITE_DENIED: A person denied the write ${id}.*did not run.*not on a Friday`));
      expect(await ids()).toEqual([1]);
      expect(await audited(id)).toMatchObject({
        outcome: 'error',
        errorCode: 'WRITE_DENIED',
        approval: { decision: 'denied', by: 'cli', reason: 'not on a Friday' },
      });
      // Decided once: a second decision finds nothing waiting.
      expect((await home.run(['approve', id])).stderr).toMatch(/No write with id/);
    });

    it.skipIf(!engine.available)('lets a write that no one decides on expire unrun', async () => {
      await home.ok(['set', 'shop', '--approval-timeout', '1']);
      try {
        const done = await terminal.call('run_query', insert(3, 'expired'));
        expect(done.isError).toBe(true);
        expect(textOf(done)).toMatch(/^APPROVAL_EXPIRED: No person approved the write (\w+) within 1 s .*approve \1`\); it did not run/);
        expect(await ids()).toEqual([1]);
        const { records } = JSON.parse((await home.ok(['audit', '--json'])).stdout);
        expect(records.at(-1)).toMatchObject({ errorCode: 'APPROVAL_EXPIRED', approval: { decision: 'expired', by: null } });
      } finally {
        await home.ok(['set', 'shop', '--approval-timeout', 'default']);
      }
    });

    it.skipIf(!engine.available)(
      'asks in the editor where the client supports elicitation: yes runs the write, no refuses it',
      async () => {
        let reply: ElicitResult = { action: 'accept', content: { approve: true } };
        const editor = await openSession(home, 'editor-client', () => reply);
        try {
          const yes = await editor.call('run_query', insert(4, 'editor yes'));
          expect(yes.isError, textOf(yes)).toBeFalsy();
          expect(textOf(yes)).toMatch(/approved in the MCP client \(which calls itself "editor-client"\)/);
          expect(editor.asked[0]).toContain(insert(4, 'editor yes').sql);
          expect(await ids()).toEqual([1, 4]);
          const { records } = JSON.parse((await home.ok(['audit', '--json'])).stdout);
          expect(records.at(-1)).toMatchObject({
            outcome: 'ok',
            approval: { decision: 'approved', by: 'elicitation', who: 'editor-client' },
          });

          reply = { action: 'accept', content: { approve: false } };
          const no = await editor.call('run_query', insert(5, 'editor no'));
          expect(no.isError).toBe(true);
          expect(textOf(no)).toMatch(
            /^WRITE_DENIED: The MCP client \(which calls itself "editor-client"\) denied the write \w+; it did not run/,
          );
          reply = { action: 'decline' };
          const declined = await editor.call('run_query', insert(6, 'editor declined'));
          expect(textOf(declined)).toMatch(/^WRITE_DENIED/);
          expect(await ids()).toEqual([1, 4]);
        } finally {
          await editor.close();
        }
      },
    );

    it.skipIf(!engine.available)('leaves the decision to the terminal when the editor question is dismissed or left open', async () => {
      const questions: { signal: AbortSignal; settle: (r: ElicitResult) => void; requestId: string | number }[] = [];
      let asked!: () => void;
      let next = new Promise<void>((r) => (asked = r));
      const editor = await openSession(home, 'slow-editor', (_message, signal, requestId) => {
        const answered = new Promise<ElicitResult>((settle) => questions.push({ signal, settle, requestId }));
        asked();
        return answered;
      });
      try {
        // Dismissed (cancel): no decision; the terminal's approval runs it.
        const first = editor.start('run_query', insert(7, 'dismissed in the editor'));
        const firstId = await first.waiting;
        await next;
        next = new Promise<void>((r) => (asked = r));
        questions[0]?.settle({ action: 'cancel' });
        expect(await ids()).toEqual([1, 4]);
        await home.ok(['approve', firstId]);
        expect(textOf(await first.result)).toMatch(/approved this write in the terminal/);
        expect(await ids()).toEqual([1, 4, 7]);

        // Left open: the terminal decides first, and the editor's question is withdrawn (notifications/cancelled).
        const second = editor.start('run_query', insert(8, 'left open in the editor'));
        const secondId = await second.waiting;
        await next;
        const withdrawn = new Promise<void>((r) => questions[1]?.signal.addEventListener('abort', () => r(), { once: true }));
        await home.ok(['deny', secondId]);
        expect(textOf(await second.result)).toMatch(/^WRITE_DENIED: .*in the terminal/);
        // The SDK's client drops a cancellation for request id 0 (a falsy-id check), which a question
        // gets when its session's server side is new (the relay reconnected): only then is there no
        // withdrawal to see.
        if (questions[1]?.requestId !== 0) await withdrawn;
        expect(await ids()).toEqual([1, 4, 7]);
      } finally {
        await editor.close();
      }
    });

    it.skipIf(!engine.available)(
      'sends a curated tool that writes through the same approval; the printed command approves it',
      async () => {
        const { result, waiting, told } = terminal.start('add_item', { id: 9, note: 'curated' });
        const id = await waiting;
        expect(await ids()).toEqual([1, 4, 7]);
        const { queries } = JSON.parse((await home.ok(['queries', '--json'])).stdout);
        expect(queries.find((q: { id: string }) => q.id === id)).toMatchObject({
          tool: 'add_item',
          sql: expect.stringContaining('INSERT'),
        });
        // What the agent is told: the id, the command as printed, and how long the write may wait.
        const message = await told;
        expect(message).toMatch(/it waits \d+ s more, then expires unrun/);
        const command = new RegExp(`\`([^\`]+ approve ${id})\``).exec(message)?.[1] as string;
        // From another terminal: the printed command names the home itself.
        const { HANACTL_HOME: _home, ...elsewhere } = home.env;
        const ran = spawnSync('sh', ['-c', command], { cwd: tmpdir(), env: elsewhere, encoding: 'utf8', timeout: 30_000 });
        expect(ran.status, `${command}\n${ran.stderr}`).toBe(0);
        expect(ran.stdout).toMatch(new RegExp(`Approved ${id}`));
        expect((await result).isError).toBeFalsy();
        expect(await ids()).toEqual([1, 4, 7, 9]);
      },
    );

    it.skipIf(!engine.available)('ends waiting writes unrun, with a clear error, when the daemon stops', async () => {
      const { result, waiting } = terminal.start('run_query', insert(10, 'stopped'));
      await waiting;
      await home.ok(['daemon', 'stop']);
      const done = await result;
      expect(done.isError).toBe(true);
      expect(textOf(done)).toMatch(
        /^SHUTTING_DOWN: The daemon was stopped while the write \w+ awaited a person's approval; it did not run/,
      );
      expect(await ids()).toEqual([1, 4, 7, 9]);
    });
  },
);
