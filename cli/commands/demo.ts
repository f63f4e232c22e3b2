import type { RunningDaemon } from '../../daemon/main.js';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { readConfig, writeConfig } from '../../shared/config.js';
import { installRoot } from '../../shared/install-root.js';
import { resolvePaths } from '../../shared/paths.js';
import { hanactlCommand, shellQuote } from '../../shared/cli-command.js';
import { DaemonClient } from '../../shared/daemon-client.js';
import { markStopped } from '../../shared/stopped-marker.js';
import type { CliContext } from '../context.js';
import { mcpConfigText } from './mcp-config.js';

const require = createRequire(import.meta.url);

interface Db {
  exec(sql: string): void;
  close(): void;
}

const DEMO_SQL = `
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, country TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price NUMERIC NOT NULL);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  customer_id INTEGER NOT NULL REFERENCES customers(id),
  product_id INTEGER NOT NULL REFERENCES products(id),
  quantity INTEGER NOT NULL,
  ordered_at TEXT NOT NULL
);
CREATE INDEX orders_customer ON orders(customer_id);
CREATE VIEW order_totals AS
  SELECT c.name AS customer, SUM(o.quantity * p.price) AS total
  FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id
  GROUP BY c.name;
INSERT INTO customers VALUES (1,'Ada Lovelace','GB','2024-01-05'),(2,'Grace Hopper','US','2024-02-11'),(3,'Hedy Lamarr','AT','2024-03-20'),(4,'Katherine Johnson','US','2024-04-02');
INSERT INTO products VALUES (1,'Keyboard',49.90),(2,'Monitor',229.00),(3,'Dock',119.50);
INSERT INTO orders VALUES (1,1,1,2,'2024-05-01'),(2,1,2,1,'2024-05-03'),(3,2,3,1,'2024-05-04'),(4,3,2,2,'2024-06-10'),(5,4,1,5,'2024-06-12');
`;

/** Creates the demo SQLite database once. */
export function createDemoDatabase(path: string): void {
  if (existsSync(path)) return;
  const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => Db;
  const db = new Database(path);
  try {
    db.exec(DEMO_SQL);
  } finally {
    db.close();
  }
}

/**
 * `npm start`: the daemon in the foreground with an embedded SQLite demo connection,
 * under its own home (`.hanactl-demo/` in the clone unless HANACTL_HOME is set). The demo
 * opts into a key file so it works on any machine, keychain or not.
 */
export async function demo(ctx: CliContext): Promise<void> {
  const repo = installRoot();
  process.env.HANACTL_HOME ??= join(repo, '.hanactl-demo');
  const paths = resolvePaths();
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  const config = readConfig(paths.config);
  if (!config.keyFile) writeConfig(paths.config, { ...config, keyFile: true });
  // The demo's registry is opened with its own key file, never a key from the shell: editors
  // started elsewhere (without that variable) must open it too, and so must the daemon they start.
  const shellKey = Boolean(process.env.HANACTL_REGISTRY_KEY);
  if (shellKey) {
    delete process.env.HANACTL_REGISTRY_KEY;
    ctx.err(
      `HANACTL_REGISTRY_KEY is set in this shell; the demo does not use it. It keeps its own key in ${paths.keyFile}, and the configs below set HANACTL_REGISTRY_KEY to empty so that a daemon an editor starts uses that file too.`,
    );
  }
  const editorEnv = shellKey ? { ...process.env, HANACTL_REGISTRY_KEY: '' } : process.env;
  const dbPath = join(paths.home, 'demo.db');
  createDemoDatabase(dbPath);

  const client = new DaemonClient({ socketPath: paths.socket, runDir: paths, clientName: 'hanactl-cli' });
  const announce = async () => {
    const { connections } = await client.listConnections();
    if (!connections.some((c) => c.name === 'demo')) {
      await client.addConnection({ name: 'demo', url: `sqlite:${dbPath}`, description: 'Demo shop: customers, products, orders' });
    }
    ctx.out('hanactl is running with the connection "demo" (SQLite, read-only).\n');
    ctx.out('Point an editor at it. Claude Code:\n');
    ctx.out(`  ${mcpConfigText('claude-code', 'demo', editorEnv)}\n`);
    ctx.out('Claude Desktop / Cursor (mcpServers):\n');
    ctx.out(mcpConfigText('cursor', 'demo', editorEnv));
    // Commands that work as printed from any terminal: this installation's CLI, the demo's home.
    const hanactl = hanactlCommand();
    ctx.out('\nOther editors (vscode, cursor, windsurf, zed, cline, continue, gemini-cli, codex, ...; --write edits the file), from any terminal:');
    ctx.out(`  ${hanactl} mcp-config --client vscode --connection demo`);
    ctx.out('Check the connection:');
    ctx.out(`  ${hanactl} test demo`);
    ctx.out('Stop with Ctrl-C.');
  };

  const { runDaemon, AlreadyRunningError } = await import('../../daemon/main.js');
  let daemon: RunningDaemon;
  try {
    daemon = await runDaemon({ keyFile: true });
  } catch (err) {
    if (!(err instanceof AlreadyRunningError)) throw err;
    ctx.err(`${err.message} Using it.`);
    await announce();
    client.close();
    return;
  }
  const onSignal = (signal: string) => {
    // Ctrl-C means stop: an editor still pointed at the demo must not start it again in the background.
    markStopped(paths, `cd ${shellQuote(repo)} && npm start`);
    void daemon.stop(signal);
  };
  // Before "Stop with Ctrl-C." is printed: a Ctrl-C right after it stops the demo cleanly.
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await announce();
  client.close();
  await daemon.stopped;
  setTimeout(() => process.exit(0), 200).unref();
}
