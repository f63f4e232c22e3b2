/**
 * A daemon serving MCP over HTTP on a free loopback port as an OAuth resource server of a test
 * provider, started by the real CLI, and the SQLite "ledger" connection the team-broker tests grant.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TestHome } from './hanactl-home.js';
import { freePort } from './mcp-http.js';

const require = createRequire(import.meta.url);

export interface OAuthDaemon {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly base: string;
  /** `${base}/mcp`: the audience tokens must name. */
  readonly audience: string;
}

/**
 * Starts `hanactl daemon start --http --listen 127.0.0.1:PORT --oauth-issuer ... --oauth-audience ...`
 * in `home`. `config` (with the audience known) is written to config.json first, when given.
 */
export async function startOAuthDaemon(
  home: TestHome,
  issuer: string,
  config?: (audience: string) => Record<string, unknown>,
): Promise<OAuthDaemon> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const audience = `${base}/mcp`;
  if (config) writeFileSync(join(home.dir, 'config.json'), JSON.stringify(config(audience)));
  await home.ok(['daemon', 'start', '--http', '--listen', `127.0.0.1:${port}`, '--oauth-issuer', issuer, '--oauth-audience', audience]);
  return { port, base, audience };
}

/** Registers `ledger`: a SQLite file with one row in `entries` (note 'opening'). */
export async function addLedger(home: TestHome): Promise<void> {
  const Database = require('better-sqlite3-multiple-ciphers');
  const ledger = new Database(join(home.dir, 'ledger.db'));
  ledger.exec("CREATE TABLE entries (id INTEGER PRIMARY KEY, note TEXT NOT NULL); INSERT INTO entries VALUES (1, 'opening');");
  ledger.close();
  await home.ok(['add', '--no-test', 'ledger', `sqlite:${join(home.dir, 'ledger.db')}`]);
}
