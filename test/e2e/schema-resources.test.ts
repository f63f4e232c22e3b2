import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { type Resource, ResourceListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

const TEMPLATE = 'hanactl://{connection}/{schema}/{table}';
const ID = `hanactl_res_${randomBytes(4).toString('hex')}`;
/** customers <- orders (a foreign key), a view over orders, and on engines with roles a table the role is not granted. */
const TABLES = [
  "CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200) DEFAULT 'none')",
  'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, total DECIMAL(10,2), FOREIGN KEY (customer_id) REFERENCES customers (id))',
  'CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100',
  "INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com'), (2, 'Bob', 'bob@example.com'), (3, 'Cy', 'cy@example.com')",
  'INSERT INTO orders VALUES (1, 1, 150), (2, 1, 20), (3, 2, 99.5)',
];

interface Engine {
  readonly name: string;
  readonly available: boolean;
  /** The schema the tables are in. */
  readonly schema: string;
  /** What the resource says of the row estimate of `orders`. */
  readonly estimate: RegExp;
  /** Creates the fixture; returns the connection URL, and one for a role that cannot see `secret_notes`. */
  setUp(home: TestHome): Promise<{ url: string; limitedUrl?: string }>;
  tearDown(): Promise<void>;
}

const sqliteEngine: Engine = {
  name: 'SQLite',
  available: true,
  schema: 'main',
  estimate: /row estimate: none/,
  async setUp(home) {
    const file = join(home.dir, 'shop.db');
    const db = new Database(file);
    for (const sql of TABLES) db.exec(sql);
    // More tables than one page of resources/list holds.
    for (let i = 0; i < 120; i++) db.exec(`CREATE TABLE t${String(i).padStart(3, '0')} (id INTEGER)`);
    db.close();
    return { url: `sqlite:${file}` };
  },
  async tearDown() {},
};

const pgAdmin = (db: string) => {
  const u = new URL(PG_URL);
  u.pathname = `/${db}`;
  return u;
};
const pgRun = async (url: URL, statements: readonly string[]) => {
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    for (const sql of statements) await client.query(sql);
  } finally {
    await client.end();
  }
};
const postgresEngine: Engine = {
  name: 'PostgreSQL',
  available: await serverAvailable('postgres'),
  schema: 'public',
  estimate: /about 3 rows \(estimate\)/,
  async setUp() {
    await pgRun(pgAdmin(new URL(PG_URL).pathname.slice(1)), [`CREATE DATABASE ${ID}`, `CREATE ROLE ${ID} LOGIN`]);
    await pgRun(pgAdmin(ID), [
      ...TABLES,
      'ANALYZE customers, orders',
      'CREATE SCHEMA secret',
      'CREATE TABLE secret.secret_notes (id INTEGER PRIMARY KEY, body TEXT)',
      `GRANT SELECT ON customers, orders, big_orders TO ${ID}`,
    ]);
    const limited = pgAdmin(ID);
    limited.username = ID;
    return { url: pgAdmin(ID).toString(), limitedUrl: limited.toString() };
  },
  async tearDown() {
    await pgRun(pgAdmin(new URL(PG_URL).pathname.slice(1)), [`DROP DATABASE IF EXISTS ${ID} WITH (FORCE)`, `DROP ROLE IF EXISTS ${ID}`]);
  },
};

const mysqlAdmin = () => {
  const u = new URL(MYSQL_URL);
  return mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    multipleStatements: false,
  });
};
const mariadbEngine: Engine = {
  name: 'MariaDB',
  available: await serverAvailable('mysql'),
  schema: ID,
  estimate: /about \d+ rows \(estimate\)/,
  async setUp() {
    const conn = await mysqlAdmin();
    try {
      await conn.query(`CREATE DATABASE ${ID}`);
      await conn.query(`USE ${ID}`);
      for (const sql of TABLES) await conn.query(sql);
      await conn.query('CREATE TABLE secret_notes (id INTEGER PRIMARY KEY, body TEXT)');
      await conn.query('ANALYZE TABLE customers, orders');
      await conn.query(`CREATE USER '${ID}'@'%'`);
      for (const t of ['customers', 'orders', 'big_orders']) await conn.query(`GRANT SELECT ON ${ID}.${t} TO '${ID}'@'%'`);
    } finally {
      await conn.end();
    }
    const u = new URL(MYSQL_URL);
    const url = `mariadb://${u.username}@${u.host}/${ID}`;
    return { url, limitedUrl: `mariadb://${ID}@${u.host}/${ID}` };
  },
  async tearDown() {
    const conn = await mysqlAdmin();
    await conn.query(`DROP DATABASE IF EXISTS ${ID}`);
    await conn.query(`DROP USER IF EXISTS '${ID}'@'%'`);
    await conn.end();
  },
};

/** Every resource of the listing, following `nextCursor`; also how many pages it took. */
async function listAll(shim: ShimHandle): Promise<{ resources: Resource[]; pages: number }> {
  const resources: Resource[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await shim.client.listResources(cursor ? { cursor } : {});
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { resources, pages };
}

/** Resolves on the session's next `notifications/resources/list_changed`. */
function listChanges(shim: ShimHandle): { next(): Promise<void> } {
  let waiters: (() => void)[] = [];
  shim.client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
    const ready = waiters;
    waiters = [];
    for (const w of ready) w();
  });
  return { next: () => new Promise<void>((r) => waiters.push(r)) };
}

const textOf = (contents: readonly ({ text: string } | { blob: string })[]) => contents.map((c) => ('text' in c ? c.text : '')).join('\n');

describe.each([sqliteEngine, postgresEngine, mariadbEngine])(
  'tables as MCP resources on $name, through the real shim and daemon',
  (engine) => {
    const home = new TestHome();
    let shim: ShimHandle;
    let limitedUrl: string | undefined;
    const uri = (table: string, connection = 'shop') => `hanactl://${connection}/${encodeURIComponent(engine.schema)}/${table}`;

    beforeAll(async () => {
      if (!engine.available) return;
      const urls = await engine.setUp(home);
      limitedUrl = urls.limitedUrl;
      await home.ok(['add', 'shop', urls.url, '--no-password']);
      new Database(join(home.dir, 'other.db')).exec('CREATE TABLE elsewhere (id INTEGER)');
      await home.ok(['add', 'other', `sqlite:${join(home.dir, 'other.db')}`]);
      shim = await startShim(home.env, ['--connection', 'shop']);
    }, 60_000);

    afterAll(async () => {
      await shim?.close();
      await home.dispose();
      if (engine.available) await engine.tearDown();
    });

    it.skipIf(!engine.available)('declares resources, prompts and completions, and keeps tools/list as it was', async () => {
      const caps = shim.client.getServerCapabilities();
      expect(caps?.resources?.listChanged).toBe(true);
      expect(caps?.prompts).toBeDefined();
      expect(caps?.completions).toBeDefined();
      const { tools } = await shim.client.listTools();
      expect(tools.map((t) => t.name)).not.toContain('explain_table');
      const { resourceTemplates } = await shim.client.listResourceTemplates();
      expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([TEMPLATE]);
    });

    it.skipIf(!engine.available)('lists the tables and views of the active connection, each under its URI', async () => {
      const { resources, pages } = await listAll(shim);
      const byUri = new Map(resources.map((r) => [r.uri, r]));
      expect(byUri.get(uri('customers'))?.name).toBe(`${engine.schema}.customers`);
      expect(byUri.get(uri('orders'))?.description).toMatch(/^table/);
      expect(byUri.get(uri('big_orders'))?.description).toMatch(/^view/);
      expect(resources.every((r) => r.uri.startsWith('hanactl://shop/'))).toBe(true);
      if (engine.name === 'SQLite') {
        // 123 tables and views: two pages of 100, none repeated.
        expect(pages).toBe(2);
        expect(byUri.size).toBe(resources.length);
        expect(byUri.has(uri('t119'))).toBe(true);
      }
    });

    it.skipIf(!engine.available)(
      'reads a table as text: columns with type, nullability and default, keys, and the row estimate',
      async () => {
        const { contents } = await shim.client.readResource({ uri: uri('orders') });
        expect(contents[0]?.uri).toBe(uri('orders'));
        expect(contents[0]?.mimeType).toBe('text/plain');
        const text = textOf(contents);
        expect(text).toContain(`${engine.schema}.orders (table) on connection "shop": 3 columns`);
        expect(text).toMatch(engine.estimate);
        expect(text).toMatch(/customer_id\s*\|\s*int[^|\n]*\|\s*no/i);
        expect(text).toContain('Primary key: (id)');
        expect(text).toMatch(new RegExp(`Foreign key \\S+: \\(customer_id\\) -> ${engine.schema}\\.customers \\(id\\)`));
        const customers = textOf((await shim.client.readResource({ uri: uri('customers') })).contents);
        expect(customers).toMatch(/email\s*\|[^|\n]+\|\s*yes\s*\|\s*'none'/);
        expect(customers).toMatch(/name\s*\|[^|\n]+\|\s*no\s*\|/);
      },
    );

    it.skipIf(!engine.available)('completes connection, schema and table names', async () => {
      const complete = async (name: string, value: string, args: Record<string, string> = {}) =>
        (
          await shim.client.complete({
            ref: { type: 'ref/resource', uri: TEMPLATE },
            argument: { name, value },
            context: { arguments: args },
          })
        ).completion.values;
      expect(await complete('connection', 'sh')).toEqual(['shop']);
      expect(await complete('schema', engine.schema.slice(0, 4), { connection: 'shop' })).toContain(engine.schema);
      expect(await complete('table', 'cust', { connection: 'shop', schema: engine.schema })).toEqual(['customers']);
      expect(await complete('table', 'ORD', { connection: 'shop', schema: engine.schema })).toEqual(['orders']);
      expect(await complete('table', 'elsew', { connection: 'other', schema: 'main' })).toEqual(['elsewhere']);
    });

    it.skipIf(!engine.available)('answers a malformed URI or a missing table with an MCP error that names the problem', async () => {
      await expect(shim.client.readResource({ uri: 'hanactl://shop/orders' })).rejects.toThrow(
        /^MCP error -32602: "hanactl:\/\/shop\/orders" is not a hanactl table resource: expected hanactl:\/\/<connection>\/<schema>\/<table>/,
      );
      await expect(shim.client.readResource({ uri: 'hanactl://shop/%E0%A4%A/x' })).rejects.toThrow(/not valid URL encoding/);
      await expect(shim.client.readResource({ uri: uri('no_such_table') })).rejects.toThrow(
        new RegExp(`^MCP error -32002: NOT_FOUND: No table or view "no_such_table" in schema "${engine.schema}"`),
      );
      await expect(shim.client.readResource({ uri: uri('orders', 'nowhere') })).rejects.toThrow(
        /^MCP error -32002: CONNECTION_NOT_FOUND: .*nowhere/,
      );
    });

    it.skipIf(!engine.available)('offers the prompts, with the table embedded and its name completed', async () => {
      const { prompts } = await shim.client.listPrompts();
      expect(prompts.map((p) => p.name).sort()).toEqual(['explain_table', 'explore_database']);
      const explore = await shim.client.getPrompt({ name: 'explore_database', arguments: { schema: engine.schema } });
      const exploreText = explore.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n');
      expect(exploreText).toContain('the connection "shop"');
      expect(exploreText).toContain(`list_tables {schema: "${engine.schema}"}`);
      const explain = await shim.client.getPrompt({ name: 'explain_table', arguments: { table: 'orders' } });
      const [first] = explain.messages;
      expect(first?.content.type).toBe('resource');
      const embedded = first?.content.type === 'resource' ? first.content.resource : undefined;
      expect(embedded?.uri).toBe(uri('orders'));
      expect(embedded && 'text' in embedded ? embedded.text : '').toContain('Primary key: (id)');
      const { completion } = await shim.client.complete({
        ref: { type: 'ref/prompt', name: 'explain_table' },
        argument: { name: 'table', value: 'big' },
      });
      expect(completion.values).toEqual(['big_orders']);
    });

    it.skipIf(!engine.available || !engine.name.match(/PostgreSQL|MariaDB/))('leaves out a table the role cannot see', async () => {
      await home.ok(['add', 'limited', limitedUrl as string, '--no-password']);
      const limited = await startShim(home.env, ['--connection', 'limited']);
      try {
        const [mine, theirs] = [await listAll(shim), await listAll(limited)];
        expect(mine.resources.map((r) => r.name)).toContain(engine.name === 'PostgreSQL' ? 'secret.secret_notes' : `${ID}.secret_notes`);
        const names = theirs.resources.map((r) => r.name);
        expect(names).toEqual(expect.arrayContaining([`${engine.schema}.customers`, `${engine.schema}.orders`]));
        expect(names.some((n) => n.endsWith('secret_notes'))).toBe(false);
      } finally {
        await limited.close();
      }
    });

    it.skipIf(!engine.available)('sends resources/list_changed when the active connection changes, and lists the new one', async () => {
      const changes = listChanges(shim);
      const changed = changes.next();
      const switched = await shim.call('use_connection', { name: 'other' });
      expect(switched.isError).toBeFalsy();
      await changed;
      const { resources } = await listAll(shim);
      expect(resources.map((r) => r.uri)).toEqual(['hanactl://other/main/elsewhere']);
      const back = changes.next();
      await shim.call('use_connection', { name: 'shop' });
      await back;
      expect((await listAll(shim)).resources.map((r) => r.uri)).toContain(uri('orders'));
    });
  },
);
