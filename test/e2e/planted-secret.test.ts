import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim } from '../helpers/mcp-client.js';
import { closedPort } from '../helpers/ports.js';

const available = await serverAvailable('postgres');
const SECRET = `planted-${randomBytes(9).toString('hex')}`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(path);
    return e.isFile() ? [path] : [];
  });
}

describe.skipIf(!available)('a planted password never leaves the daemon', () => {
  const home = new TestHome();
  const results: unknown[] = [];
  let shim: ShimHandle;

  beforeAll(async () => {
    const url = new URL(PG_URL);
    const port = await closedPort();
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--password-stdin'], { input: `${SECRET}\n` });
    await home.ok(['add', '--no-test', 'dead', `postgres://${url.username}@127.0.0.1:${port}/db`, '--password-stdin'], { input: SECRET });
    await home.ok(['add', '--no-test', 'nodb', `postgres://${url.username}@${url.host}/no_such_db_${process.pid}`, '--password-stdin'], {
      input: SECRET,
    });
    // A password inside the URL is accepted with a warning, and must not echo back either.
    const inUrl = await home.ok(['add', '--no-test', 'inurl', `postgres://${url.username}:${SECRET}@${url.host}/postgres`]);
    expect(inUrl.stderr).toMatch(/warning: the URL holds a password/);
    shim = await startShim(home.env, ['--connection', 'pg']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  it('exercises every command and tool, including failures', async () => {
    for (const args of [
      ['list'],
      ['list', '--json'],
      ['test', 'pg'],
      ['test', 'dead'],
      ['test', 'nodb'],
      ['test', 'inurl', '--json'],
      ['status', '--json'],
      ['status'],
      ['pools', '--json'],
      ['daemon', 'status', '--json'],
      ['mcp-config', '--client', 'vscode', '--connection', 'pg'],
    ]) {
      await home.run(args);
    }
    const calls: [string, Record<string, unknown>][] = [
      ['list_connections', {}],
      ['current_connection', {}],
      ['run_query', { sql: 'SELECT current_user, 1 AS n' }],
      ['run_query', { sql: 'SELEC broken' }],
      ['run_query', { sql: 'SELECT 1', connection: 'dead' }],
      ['run_query', { sql: 'SELECT 1', connection: 'nodb' }],
      ['run_query', { sql: 'SELECT 1', connection: 'inurl' }],
      ['run_query', { sql: 'SELECT 1', connection: 'missing' }],
      ['use_connection', { name: 'dead' }],
      ['current_connection', {}],
      ['use_connection', { name: 'nope' }],
    ];
    for (const [name, args] of calls) results.push(await shim.call(name, args));
    expect(results).toHaveLength(calls.length);
    // The failures really failed (so their messages were exercised).
    expect(JSON.stringify(results)).toMatch(/CONNECT_FAILED/);
    expect(JSON.stringify(results)).toMatch(/no_such_db/);
  });

  it('is in no output, tool result, log line or file under the home folder', async () => {
    await home.run(['daemon', 'stop']);
    const haystacks: [string, string][] = [
      ['cli output', home.outputs.join('\n')],
      ['shim stderr', shim.stderr()],
      ['tool results', JSON.stringify(results)],
    ];
    for (const file of filesUnder(home.dir)) {
      if (statSync(file).size < 50_000_000) haystacks.push([file, readFileSync(file).toString('latin1')]);
    }
    const hits = haystacks.filter(([, text]) => text.includes(SECRET)).map(([where]) => where);
    expect(hits).toEqual([]);
    expect(haystacks.some(([where]) => where.endsWith('daemon.log'))).toBe(true);
  });
});
