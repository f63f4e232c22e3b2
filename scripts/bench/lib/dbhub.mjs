// DBHub (@bytebase/dbhub), a published TypeScript MCP server for databases: one process per
// session, started over stdio as its README shows, on the run's PostgreSQL. A devDependency
// pinned to 0.21.x, the newest line that runs on Node 20 (0.22 and later need Node ≥ 22.5).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const home = (repo) => join(repo, 'node_modules/@bytebase/dbhub');

export function dbhubVersion(repo) {
  try {
    return JSON.parse(readFileSync(join(home(repo), 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** How a session starts DBHub on `url`; its query tool is `execute_sql`. */
export function dbhubCommand(repo, url) {
  const main = join(home(repo), 'dist/index.js');
  if (!existsSync(main)) throw new Error(`DBHub is not installed (${main}); run npm install`);
  const dsn = new URL(url);
  // Loopback PostgreSQL without TLS, as the other contenders reach it.
  if (dsn.protocol.startsWith('postgres') && !dsn.searchParams.has('sslmode')) dsn.searchParams.set('sslmode', 'disable');
  return {
    command: process.execPath,
    args: [main, '--transport', 'stdio', '--dsn', dsn.toString()],
    env: process.env,
    tool: 'execute_sql',
  };
}
