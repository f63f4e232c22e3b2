import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_URL, PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { connectHttp, createToken, type HttpClientHandle, startHttpDaemon } from '../helpers/mcp-http.js';

const pgUp = await serverAvailable('postgres');
const mysqlUp = await serverAvailable('mysql');

const tag = randomBytes(5).toString('hex');
/** The connections' password, and a wrong guess of the same length and shape. */
const PASSWORD = `agentpw7-${tag}`;
const WRONG = `agentpw6-${randomBytes(5).toString('hex')}`;
const MY_USER = `oracle_${tag}`;
const MY_USER_X = `oracle_x_${tag}`;

/** A statement whose error (or cell) quotes the agent's text, on each engine. */
const PROBES: Record<'postgres' | 'mysql' | 'sqlite', { error: (guess: string) => string; cell: (guess: string) => string }> = {
  postgres: { error: (g) => `SELECT 'a-${g}-c'::int`, cell: (g) => `SELECT 'a-${g}-c' AS v` },
  mysql: { error: (g) => `SELECT * FROM \`a-${g}-c\``, cell: (g) => `SELECT 'a-${g}-c' AS v` },
  sqlite: { error: (g) => `SELECT * FROM "a-${g}-c"`, cell: (g) => `SELECT 'a-${g}-c' AS v` },
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(path);
    return e.isFile() ? [path] : [];
  });
}

function mysqlAdmin(): Promise<mysql.Connection> {
  const u = new URL(MYSQL_URL);
  return mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
}

function userUrl(user: string): string {
  const u = new URL(MYSQL_URL);
  u.username = user;
  return u.toString();
}

/**
 * The agent shapes the text a server quotes in its errors; an answer that changed when that text
 * held the connection's password would confirm a guess. The right and a wrong guess must get the
 * same answer, the guess aside, and a short password must not mark every error it occurs in.
 */
describe('a guessed password gets the same answer as any other text', () => {
  const home = new TestHome();
  let shim: ShimHandle;
  let http: HttpClientHandle | undefined;
  let token = '';

  beforeAll(async () => {
    // One daemon serves both: the relay the shim starts finds it running with MCP over HTTP.
    const { base } = await startHttpDaemon(home);
    if (pgUp) {
      // Loopback trusts the test server's user: the password is held and sent, not checked.
      await home.ok(['add', '--no-test', 'pg', PG_URL, '--password-stdin'], { input: `${PASSWORD}\n` });
      await home.ok(['add', '--no-test', 'pgx', PG_URL, '--password-stdin'], { input: 'x\n' });
    }
    if (mysqlUp) {
      const admin = await mysqlAdmin();
      try {
        const database = new URL(MYSQL_URL).pathname.slice(1);
        for (const [user, password] of [
          [MY_USER, PASSWORD],
          [MY_USER_X, 'x'],
        ]) {
          await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`);
          await admin.query(`GRANT SELECT ON \`${database}\`.* TO '${user}'@'%'`);
        }
      } finally {
        await admin.end();
      }
      await home.ok(['add', '--no-test', 'my', userUrl(MY_USER), '--password-stdin'], { input: `${PASSWORD}\n` });
      await home.ok(['add', '--no-test', 'myx', userUrl(MY_USER_X), '--password-stdin'], { input: 'x\n' });
    }
    writeFileSync(join(home.dir, 'lite.db'), '');
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    shim = await startShim(home.env);
    if (pgUp) {
      token = await createToken(home, 'oracle', 'pg');
      http = await connectHttp(`${base}/mcp/pg`, token, 'oracle-http');
    }
  });

  afterAll(async () => {
    await http?.close();
    await shim?.close();
    await home.dispose();
    if (mysqlUp) {
      const admin = await mysqlAdmin();
      for (const user of [MY_USER, MY_USER_X]) await admin.query(`DROP USER IF EXISTS '${user}'@'%'`).catch(() => {});
      await admin.end();
    }
  });

  /**
   * The call's whole answer (text, error flag, rows) with the guess written as GUESS; the time it
   * took and the fence around its rows (fresh each call) are the only other parts that differ.
   * Over the relay, or over HTTP with `over`.
   */
  async function answer(connection: string, sql: string, guess: string, over?: HttpClientHandle): Promise<string> {
    const result = over ? await over.call('run_query', { sql }) : await shim.call('run_query', { sql, connection });
    return JSON.stringify({ isError: result.isError ?? false, text: textOf(result), rows: result.structuredContent ?? null })
      .split(guess)
      .join('GUESS')
      .replace(/\(\d+(?:\.\d+)? ms\)/g, '(TIME)')
      .replace(/data-[0-9a-f]{16}/g, 'data-FENCE');
  }

  for (const [connection, engine, up] of [
    ['pg', 'postgres', pgUp],
    ['my', 'mysql', mysqlUp],
  ] as const) {
    it.skipIf(!up)(`${engine}: an error quoting the right guess reads as one quoting a wrong guess`, async () => {
      const right = await answer(connection, PROBES[engine].error(PASSWORD), PASSWORD);
      const wrong = await answer(connection, PROBES[engine].error(WRONG), WRONG);
      expect(right).toMatch(/QUERY_FAILED/);
      expect(right).toContain('a-GUESS-c');
      expect(right).toBe(wrong);
    });

    it.skipIf(!up)(`${engine}: many guesses in one statement are all quoted as written`, async () => {
      const result = await shim.call('run_query', { sql: PROBES[engine].error(`${WRONG}-b-${PASSWORD}`), connection });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`a-${WRONG}-b-${PASSWORD}-c`);
    });

    it.skipIf(!up)(`${engine}: a cell holding the right guess reads as one holding a wrong guess`, async () => {
      const right = await answer(connection, PROBES[engine].cell(PASSWORD), PASSWORD);
      expect(right).toContain('a-GUESS-c');
      expect(right).toBe(await answer(connection, PROBES[engine].cell(WRONG), WRONG));
    });
  }

  it.skipIf(!pgUp)('postgres over HTTP: the password and the bearer token guessed read as any other text', async () => {
    const client = http as HttpClientHandle;
    const right = await answer('pg', PROBES.postgres.error(PASSWORD), PASSWORD, client);
    expect(right).toContain('a-GUESS-c');
    expect(right).toBe(await answer('pg', PROBES.postgres.error(WRONG), WRONG, client));
    const other = `${token.slice(0, -6)}zzzzzz`;
    const tokenRight = await answer('pg', PROBES.postgres.error(token), token, client);
    expect(tokenRight).toContain('a-GUESS-c');
    expect(tokenRight).toBe(await answer('pg', PROBES.postgres.error(other), other, client));
  });

  it('sqlite: the registry key guessed in an error reads as any other text', async () => {
    const key = home.env.HANACTL_REGISTRY_KEY as string;
    const other = randomBytes(32).toString('base64');
    const right = await answer('lite', PROBES.sqlite.error(key), key);
    expect(right).toMatch(/QUERY_FAILED/);
    expect(right).toBe(await answer('lite', PROBES.sqlite.error(other), other));
  });

  it.skipIf(!pgUp)('postgres: a one-letter password does not mark every error it occurs in', async () => {
    const result = await shim.call('run_query', { sql: "SELECT 'execute nextval() in context'::int", connection: 'pgx' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('"execute nextval() in context"');
    expect(textOf(result)).not.toContain('***');
  });

  it.skipIf(!mysqlUp)('mysql: a one-letter password does not mark every error it occurs in', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT * FROM execute_next_context', connection: 'myx' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('execute_next_context');
    expect(textOf(result)).not.toContain('***');
  });

  it.skipIf(!pgUp && !mysqlUp)('the password is in no log line or file under the home after the probes', async () => {
    await home.stop();
    const hits = filesUnder(home.dir)
      .filter((file) => statSync(file).size < 50_000_000)
      .filter((file) => readFileSync(file).toString('latin1').includes(PASSWORD));
    expect(hits).toEqual([]);
    expect(filesUnder(home.dir).some((file) => file.endsWith('daemon.log'))).toBe(true);
  });
});
