/**
 * An outside review froze the daemon with one tool call each: a quadratic regex ran on the event
 * loop over PostgreSQL's parser message (which quotes the statement) and over explain_query's text.
 * Its exact inputs, through the real shim and daemon: the call is refused (or planned) with a short,
 * clear answer, and meanwhile another session's call and `GET /v1/health` are answered. Before the
 * fix these calls held the loop for 17 s and 8 s, past this file's timeouts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { rawRequest, socketOf } from '../reliability/helpers/daemon-api.js';
import { disposeHome, startLiteDaemon } from '../reliability/helpers/lite-daemon.js';

const available = await serverAvailable('postgres');

/** The review's inputs: 60 014 bytes (under the off-thread threshold then), and 40 010 bytes. */
const PARSER_MESSAGE = `SELECT 'x' '${' '.repeat(60_000)}x'`;
const EXPLAIN_TEXT = `SELECT '${' '.repeat(40_000)}x'`;

describe.skipIf(!available)('one hostile call does not hold the daemon (review F7)', () => {
  const home = new TestHome();
  const data = mkdtempSync(join(tmpdir(), 'hanactl-redos-'));
  const shims: ShimHandle[] = [];

  beforeAll(async () => {
    await startLiteDaemon(home, data);
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--no-password']);
    for (const connection of ['pg', 'lite', 'lite']) shims.push(await startShim(home.env, ['--connection', connection]));
  });
  afterAll(async () => {
    await Promise.all(shims.map((s) => s.close()));
    await disposeHome(home, data);
  });

  it('refuses the parser-message input and plans the explain input while another session and health are answered', {
    timeout: 15_000,
  }, async () => {
    const [pg, lite, other] = shims as [ShimHandle, ShimHandle, ShimHandle];
    const done: string[] = [];
    const settle = <T>(what: string, p: Promise<T>) =>
      p.then((v) => {
        done.push(what);
        return v;
      });
    const [refused, planned, answer, health] = await Promise.all([
      settle('run_query', pg.call('run_query', { sql: PARSER_MESSAGE })),
      settle('explain_query', lite.call('explain_query', { sql: EXPLAIN_TEXT })),
      settle('other session', other.call('run_query', { sql: 'SELECT name FROM t ORDER BY id' })),
      settle('health', rawRequest(socketOf(home), { method: 'GET', path: '/v1/health', timeoutMs: 10_000 })),
    ]);
    console.log(`[redos-shim] answered in this order: ${done.join(', ')}`);

    expect(refused.isError).toBe(true);
    const refusal = textOf(refused);
    expect(refusal).toMatch(
      /^STATEMENT_REFUSED: Refused: PostgreSQL's parser could not read this statement: syntax error at or near "' +… \(\d+ more characters\)\. /,
    );
    expect(refusal.length).toBeLessThan(600);

    expect(planned.isError, textOf(planned)).toBeFalsy();
    expect(textOf(planned)).toMatch(/SCAN|CONSTANT|plan/i);

    expect(answer.structuredContent).toMatchObject({ rows: [{ name: 'a' }, { name: 'b' }] });
    expect(health.status).toBe(200);
  });

  it('answers a megabyte of the same shapes too', { timeout: 15_000 }, async () => {
    const [pg, lite] = shims as [ShimHandle, ShimHandle];
    const big = `SELECT 'x' '${' '.repeat(900_000)}x'`;
    const [refused, planned] = await Promise.all([
      pg.call('run_query', { sql: big }),
      lite.call('explain_query', { sql: `SELECT '${' '.repeat(900_000)}x';;  ` }),
    ]);
    expect(textOf(refused)).toMatch(/^STATEMENT_REFUSED: Refused: PostgreSQL's parser could not read this statement: .*more characters/);
    expect(planned.isError, textOf(planned).slice(0, 300)).toBeFalsy();
  });
});
