import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

const TABLE = 'curated_orders';
const ROWS = [
  [1, 7, 10.5, 'first'],
  [2, 7, 99.25, 'second'],
  [3, 8, 5, 'other customer'],
] as const;

/** The file a person writes: two small tools; the literal ':not_a_param' must stay a literal. */
const TOOLS_YAML = `tools:
  - name: orders_for_customer
    description: Orders of one customer above a total, newest first.
    sql: >-
      SELECT id, total, ':not_a_param' AS tag FROM ${TABLE}
      WHERE customer_id = :customer_id AND total >= :min_total ORDER BY id DESC
    parameters:
      - {name: customer_id, type: integer, description: The customer's id}
      - {name: min_total, type: number}
  - name: orders_by_note
    description: Orders whose note is exactly this text.
    sql: SELECT id FROM ${TABLE} WHERE note = :note
    parameters:
      - {name: note, type: string}
`;

interface Engine {
  readonly name: string;
  readonly available: boolean;
  setUp(home: TestHome): Promise<string>;
  tearDown(): Promise<void>;
}

const sqliteEngine: Engine = {
  name: 'SQLite',
  available: true,
  async setUp(home) {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE ${TABLE} (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL, note TEXT)`);
    const insert = db.prepare(`INSERT INTO ${TABLE} VALUES (?, ?, ?, ?)`);
    for (const r of ROWS) insert.run(...r);
    db.close();
    return `sqlite:${file}`;
  },
  async tearDown() {},
};

const pgAvailable = await serverAvailable('postgres');
const postgresEngine: Engine = {
  name: 'PostgreSQL',
  available: pgAvailable,
  async setUp() {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await client.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, customer_id int, total numeric(10,2), note text)`);
    for (const r of ROWS) await client.query(`INSERT INTO ${TABLE} VALUES ($1, $2, $3, $4)`, [...r]);
    await client.end();
    return PG_URL;
  },
  async tearDown() {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await client.end();
  },
};

const myAvailable = await serverAvailable('mysql');
const mysqlConnect = () => {
  const u = new URL(MYSQL_URL);
  return mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    database: u.pathname.slice(1),
  });
};
const mariadbEngine: Engine = {
  name: 'MariaDB',
  available: myAvailable,
  async setUp() {
    const conn = await mysqlConnect();
    await conn.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await conn.query(`CREATE TABLE ${TABLE} (id int PRIMARY KEY, customer_id int, total decimal(10,2), note text)`);
    for (const r of ROWS) await conn.query(`INSERT INTO ${TABLE} VALUES (?, ?, ?, ?)`, [...r]);
    await conn.end();
    return MYSQL_URL.replace(/^mysql:/, 'mariadb:');
  },
  async tearDown() {
    const conn = await mysqlConnect();
    await conn.query(`DROP TABLE IF EXISTS ${TABLE}`);
    await conn.end();
  },
};

/** Resolves on the session's next `notifications/tools/list_changed`. */
function listChanges(shim: ShimHandle): { next(): Promise<void> } {
  let waiters: (() => void)[] = [];
  shim.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  });
  return { next: () => new Promise<void>((r) => waiters.push(r)) };
}

const names = async (shim: ShimHandle) => (await shim.client.listTools()).tools.map((t) => t.name);

describe.each([sqliteEngine, postgresEngine, mariadbEngine])('curated tools on $name, through the real shim and daemon', (engine) => {
  const home = new TestHome();
  let shim: ShimHandle;
  let changes: { next(): Promise<void> };

  beforeAll(async () => {
    if (!engine.available) return;
    const url = await engine.setUp(home);
    await home.ok(['add', 'shop', url, '--no-password']);
    new Database(join(home.dir, 'other.db')).close();
    await home.ok(['add', 'other', `sqlite:${join(home.dir, 'other.db')}`]);
    // Two tools take more of tools/list than a connection that also offers run_query has: curated-only first.
    await home.ok(['set', 'shop', '--curated-only']);
    writeFileSync(join(home.dir, 'tools.yaml'), TOOLS_YAML);
    await home.ok(['tools', 'import', 'shop', join(home.dir, 'tools.yaml')]);
    shim = await startShim(home.env, ['--connection', 'shop']);
    changes = listChanges(shim);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    if (engine.available) await engine.tearDown();
  });

  it.skipIf(!engine.available)('offers each tool under its name, with an input schema from the declared types', async () => {
    const { tools } = await shim.client.listTools();
    const tool = tools.find((t) => t.name === 'orders_for_customer');
    expect(tool?.description).toBe('Orders of one customer above a total, newest first.');
    expect(tool?.inputSchema).toMatchObject({
      type: 'object',
      properties: { customer_id: { type: 'integer', description: "The customer's id" }, min_total: { type: 'number' } },
      required: ['customer_id', 'min_total'],
    });
    expect(tool?.annotations?.readOnlyHint).toBe(true);
    expect(tools.map((t) => t.name)).toContain('orders_by_note');
    // Nothing of free access: no free SQL, no plan of free SQL, no rows of any table.
    for (const free of ['run_query', 'explain_query', 'sample_rows']) expect(tools.map((t) => t.name)).not.toContain(free);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['list_tables', 'describe_table']));
    expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(8192);
  });

  it.skipIf(!engine.available)('runs the statement with the values bound, through the same layers as run_query', async () => {
    const result = await shim.call('orders_for_customer', { customer_id: 7, min_total: 50 });
    expect(result.isError, textOf(result)).toBeFalsy();
    const { rows } = result.structuredContent as { rows: { id: number; total: unknown; tag: string }[] };
    expect(rows.map((r) => Number(r.id))).toEqual([2]);
    expect(rows[0]?.tag).toBe(':not_a_param');
    const both = await shim.call('orders_for_customer', { customer_id: 7, min_total: 0 });
    expect((both.structuredContent as { rows: { id: number }[] }).rows.map((r) => Number(r.id))).toEqual([2, 1]);
    // A value is a value: SQL in it is never read as SQL.
    const injected = await shim.call('orders_by_note', { note: "x' OR '1'='1" });
    expect((injected.structuredContent as { rowCount: number }).rowCount).toBe(0);
    expect((await shim.call('orders_by_note', { note: 'first' })).structuredContent).toMatchObject({ rowCount: 1 });
    const audit = JSON.parse((await home.ok(['audit', '--json'])).stdout);
    expect(JSON.stringify(audit)).toContain('orders_for_customer');
  });

  it.skipIf(!engine.available)('refuses arguments of the wrong type, saying which and what it must be', async () => {
    const wrong = await shim.call('orders_for_customer', { customer_id: 'seven', min_total: 1 });
    expect(wrong.isError).toBe(true);
    expect(textOf(wrong)).toMatch(/customer_id/);
  });

  it.skipIf(!engine.available)('swaps the tools when the active connection changes, and says so with tools/list_changed', async () => {
    const changed = changes.next();
    expect((await shim.call('use_connection', { name: 'other' })).isError).toBeFalsy();
    await changed;
    const elsewhere = await names(shim);
    expect(elsewhere).not.toContain('orders_for_customer');
    expect(elsewhere).toContain('run_query');
    const back = changes.next();
    await shim.call('use_connection', { name: 'shop' });
    await back;
    const listed = await names(shim);
    expect(listed).toEqual(expect.arrayContaining(['orders_for_customer', 'orders_by_note']));
    expect(listed).not.toContain('run_query');
  });

  it.skipIf(!engine.available)('refuses free SQL on a curated-only connection, from any session', async () => {
    // Another session may still hold run_query (its active connection is not curated-only): the daemon refuses it for shop.
    const elsewhere = await startShim(home.env, ['--connection', 'other']);
    try {
      const refused = await elsewhere.call('run_query', { sql: `SELECT * FROM ${TABLE}`, connection: 'shop' });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/^FORBIDDEN: .*curated-only.*hanactl(?:\.js)? set shop --no-curated-only/);
      const sampled = await elsewhere.call('sample_rows', { table: TABLE, connection: 'shop' });
      expect(sampled.isError).toBe(true);
      expect(textOf(sampled)).toMatch(/^FORBIDDEN: .*curated-only.*sample_rows/);
      const planned = await elsewhere.call('explain_query', { sql: `SELECT * FROM ${TABLE}`, connection: 'shop' });
      expect(planned.isError).toBe(true);
      expect(textOf(planned)).toMatch(/^FORBIDDEN: .*curated-only.*explain_query/);
    } finally {
      await elsewhere.close();
    }
  });

  it.skipIf(!engine.available)('offers run_query again without curated-only, and only the tools that fit the list’s budget', async () => {
    const again = changes.next();
    await home.ok(['set', 'shop', '--no-curated-only']);
    await again;
    const { tools } = await shim.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['run_query', 'explain_query', 'sample_rows', 'orders_for_customer']));
    expect(tools.map((t) => t.name)).not.toContain('orders_by_note');
    expect(JSON.stringify({ tools }).length).toBeLessThanOrEqual(8192);
    const listed = JSON.parse((await home.ok(['tools', 'list', 'shop', '--json'])).stdout);
    expect(listed.tools.map((t: { name: string; offered: boolean }) => `${t.name}:${t.offered}`)).toEqual([
      'orders_for_customer:true',
      'orders_by_note:false',
    ]);
    expect((await home.ok(['tools', 'list'])).stdout).toMatch(/orders_by_note .*no \(over its tool-list share\)/);
    const back = changes.next();
    await home.ok(['set', 'shop', '--curated-only']);
    await back;
    expect(await names(shim)).not.toContain('run_query');
  });

  it.skipIf(!engine.available)('lists and removes tools from the command line; the session follows', async () => {
    const listed = JSON.parse((await home.ok(['tools', 'list', 'shop', '--json'])).stdout);
    expect(listed.tools.map((t: { name: string; offered: boolean }) => `${t.name}:${t.offered}`)).toEqual([
      'orders_for_customer:true',
      'orders_by_note:true',
    ]);
    const text = (await home.ok(['tools', 'list'])).stdout;
    expect(text).toMatch(/shop\s+\|\s+orders_for_customer\s+\|\s+customer_id:integer, min_total:number/);
    const changed = changes.next();
    await home.ok(['tools', 'remove', 'shop', 'orders_by_note']);
    await changed;
    expect(await names(shim)).not.toContain('orders_by_note');
    const gone = await home.run(['tools', 'remove', 'shop', 'orders_by_note']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('has no curated tool named "orders_by_note". Its curated tools: orders_for_customer.');
  });
});

describe('hanactl tools import refuses a bad file, naming the line, the tool and the fix', () => {
  const home = new TestHome();
  const file = (name: string, text: string) => {
    const path = join(home.dir, name);
    writeFileSync(path, text);
    return path;
  };
  const refused = async (path: string, connection = 'ro') => {
    const result = await home.run(['tools', 'import', connection, path]);
    expect(result.code, result.stdout).toBe(1);
    return result.stderr;
  };

  beforeAll(async () => {
    const db = new Database(join(home.dir, 'ro.db'));
    db.exec('CREATE TABLE t (id INTEGER, name TEXT)');
    db.close();
    await home.ok(['add', 'ro', `sqlite:${join(home.dir, 'ro.db')}`]);
    await home.ok(['add', 'rw', `sqlite:${join(home.dir, 'ro.db')}`, '--allow-write']);
  });
  afterAll(() => home.dispose());

  it('refuses a write on a read-only connection, by the same policy as run_query', async () => {
    const path = file(
      'write.yaml',
      'tools:\n  - name: rename\n    description: Renames a row.\n    sql: UPDATE t SET name = :name WHERE id = :id\n    parameters:\n      - {name: name, type: string}\n      - {name: id, type: integer}\n',
    );
    const err = await refused(path);
    expect(err).toContain(`${path} line 2: tools[0] "rename".sql:`);
    expect(err).toContain('The connection is read-only');
    // The same file on a connection a person opened for writes: stored, and offered as a destructive tool.
    await home.ok(['tools', 'import', 'rw', path]);
    const { tools } = JSON.parse((await home.ok(['tools', 'list', 'rw', '--json'])).stdout);
    expect(tools).toEqual([expect.objectContaining({ name: 'rename', kind: 'write', offered: true })]);
  });

  it('refuses unknown and unused placeholders, duplicate and built-in names, bad types and positional markers', async () => {
    const path = file(
      'bad.yaml',
      [
        'tools:',
        '  - name: by_id',
        '    description: One row.',
        '    sql: SELECT * FROM t WHERE id = :id AND name = :nmae',
        '    parameters:',
        '      - {name: id, type: integer}',
        '      - {name: name, type: string}',
        '  - name: by_id',
        '    description: Again.',
        '    sql: SELECT 1',
        '  - name: run_query',
        '    description: Shadows a built-in.',
        '    sql: SELECT 1',
        '  - name: positional',
        '    description: Uses a question mark.',
        '    sql: SELECT * FROM t WHERE id = ?',
        '',
      ].join('\n'),
    );
    const err = await refused(path);
    expect(err).toMatch(/^hanactl: Nothing was imported; fix the file and import it again:/);
    expect(err).toContain(`${path} line 8: tools[1] "by_id".name: the tool "by_id" is declared twice`);
    expect(err).toContain(`${path} line 4: tools[0] "by_id".sql: the statement uses :nmae, which is not declared`);
    expect(err).toContain(
      `${path} line 7: tools[0] "by_id".parameters[1].name: the parameter "name" is declared but the statement has no :name`,
    );
    expect(err).toContain(`${path} line 11: tools[2] "run_query".name: "run_query" is a built-in tool's name`);
    expect(err).toContain(`${path} line 16: tools[3] "positional".sql: the statement uses the positional marker ?`);
    const types = file(
      'types.yaml',
      'tools:\n  - name: t1\n    description: x\n    sql: SELECT :a\n    parameters:\n      - {name: a, type: date}\n',
    );
    expect(await refused(types)).toContain(
      `${types} line 6: tools[0] "t1".parameters[0].type: use one of string, integer, number, boolean`,
    );
    const yaml = file('broken.yaml', 'tools:\n  - name: [unclosed\n');
    expect(await refused(yaml)).toMatch(/line \d+: not valid YAML/);
    const { tools } = JSON.parse((await home.ok(['tools', 'list', 'ro', '--json'])).stdout);
    expect(tools).toEqual([]);
  });

  it('refuses a name the connection has already, unless --replace swaps the whole set', async () => {
    const one = file(
      'one.yaml',
      'tools:\n  - name: count_rows\n    description: How many rows t has.\n    sql: SELECT count(*) AS n FROM t\n',
    );
    await home.ok(['tools', 'import', 'ro', one]);
    expect(await refused(one)).toContain('has a curated tool named "count_rows" already');
    await home.ok(['tools', 'import', 'ro', one, '--replace']);
    const { tools } = JSON.parse((await home.ok(['tools', 'list', 'ro', '--json'])).stdout);
    expect(tools.map((t: { name: string }) => t.name)).toEqual(['count_rows']);
  });
});
