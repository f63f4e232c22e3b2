import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3-multiple-ciphers');

const WIDE = 'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<200) SELECT i, hex(randomblob(60000)) AS h FROM n';
const HUGE_CELL = 'SELECT randomblob(10000000) AS b';
const MANY = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<10000) SELECT i, printf('%0200d', i) AS padded FROM n";
const DEFAULT_CAP = 64 * 1024;

/** The bytes the result takes on the wire (text and structured content, as serialized). */
const sizeOf = (result: CallToolResult): number => Buffer.byteLength(JSON.stringify(result));

interface Rows {
  rows: Record<string, unknown>[];
  rowCount: number;
  truncated: boolean;
  cut?: { note: string; rowsLeftOut: number; cellsCut: number; cellChars: number; columns: string[] };
}

describe('tool results are capped in bytes by the daemon', () => {
  const home = new TestHome();
  let shim: ShimHandle;

  beforeAll(async () => {
    const db = new Database(join(home.dir, 'wide.db'));
    db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB)');
    db.exec(
      'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i<20) INSERT INTO blobs SELECT i, randomblob(200000) FROM n',
    );
    db.close();
    await home.ok(['add', '--no-test', 'wide', `sqlite:${join(home.dir, 'wide.db')}`]);
    await home.ok(['add', '--no-test', 'roomy', `sqlite:${join(home.dir, 'wide.db')}`]);
    shim = await startShim(home.env, ['--connection', 'wide']);
    // Listing the tools makes the client check every structured result against its output schema.
    await shim.client.listTools();
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
  });

  it('cuts 200 rows of 120 KB to the default cap, says what was cut, and the session keeps working', async () => {
    const result = await shim.call('run_query', { sql: WIDE, maxRows: 200 });
    expect(result.isError).toBeFalsy();
    expect(sizeOf(result)).toBeLessThanOrEqual(DEFAULT_CAP);
    const s = result.structuredContent as unknown as Rows;
    expect(s.truncated).toBe(true);
    // Rows stop being read once those kept fill the cap as shown: a few more than fit, not all 200.
    expect(s.cut?.rowsLeftOut).toBeGreaterThan(0);
    expect(s.rowCount + (s.cut?.rowsLeftOut ?? 0)).toBeLessThan(200);
    expect(s.cut?.columns).toEqual(['h']);
    expect(s.rowCount).toBeGreaterThan(0);
    const text = textOf(result);
    expect(text).toMatch(new RegExp(`${s.rowCount} of the ${s.rowCount + (s.cut?.rowsLeftOut ?? 0)} rows read are shown`));
    expect(text).toMatch(/select fewer or narrower columns.*lower maxRows, or add a WHERE/);
    expect(text).toContain(`${home.cli} set wide --max-result-bytes`);
    // The same cut in both forms: the structured cell is what the text shows.
    const first = String(s.rows[0]?.h);
    expect(first).toMatch(/^[0-9A-F]+…\[cut\]$/);
    expect(first.length).toBe((s.cut?.cellChars ?? 0) + '…[cut]'.length);
    expect(text).toContain(first);
    const after = await shim.call('run_query', { sql: 'SELECT 41 + 1 AS answer' });
    expect(after.structuredContent).toMatchObject({ rows: [{ answer: 42 }] });
  });

  it('cuts a 10 MB cell (20 MB as hex) and stays connected', async () => {
    const result = await shim.call('run_query', { sql: HUGE_CELL });
    expect(result.isError).toBeFalsy();
    expect(sizeOf(result)).toBeLessThanOrEqual(DEFAULT_CAP);
    const s = result.structuredContent as unknown as Rows;
    expect(s.rowCount).toBe(1);
    expect(String(s.rows[0]?.b)).toMatch(/^\\x[0-9a-f]+…\[cut\]$/);
    expect(textOf(result)).toMatch(/1 value of b cut to \d+ characters/);
    expect((await shim.call('current_connection')).isError).toBeFalsy();
  });

  it('maxRows 10000 no longer sends megabytes without a word', async () => {
    const result = await shim.call('run_query', { sql: MANY, maxRows: 10_000 });
    expect(sizeOf(result)).toBeLessThanOrEqual(DEFAULT_CAP);
    const s = result.structuredContent as unknown as Rows;
    expect(s.truncated).toBe(true);
    expect(s.cut?.rowsLeftOut).toBeGreaterThan(0);
    expect(s.rowCount + (s.cut?.rowsLeftOut ?? 0)).toBeLessThan(10_000);
    expect(s.cut?.cellsCut).toBe(0);
    expect(textOf(result)).toMatch(/rows read are shown/);
  });

  it('cuts catalog answers too (sample_rows of a table of 200 KB blobs)', async () => {
    const result = await shim.call('sample_rows', { table: 'blobs', limit: 20 });
    expect(result.isError).toBeFalsy();
    expect(sizeOf(result)).toBeLessThanOrEqual(DEFAULT_CAP);
    expect(textOf(result)).toMatch(/Cut to fit 64 KiB per result/);
    expect((result.structuredContent as unknown as Rows).cut?.columns).toEqual(['body']);
  });

  it('a person raises the cap per connection with hanactl set --max-result-bytes', async () => {
    const cap = 1024 * 1024;
    const set = await home.ok(['set', 'roomy', '--max-result-bytes', String(cap)]);
    expect(set.stdout).toContain(`tool results up to ${cap} bytes`);
    const listed = JSON.parse((await home.ok(['list', '--json'])).stdout) as { connections: { name: string; maxResultBytes?: number }[] };
    expect(listed.connections.find((c) => c.name === 'roomy')?.maxResultBytes).toBe(cap);
    const result = await shim.call('run_query', { sql: MANY, maxRows: 10_000, connection: 'roomy' });
    const size = sizeOf(result);
    expect(size).toBeGreaterThan(DEFAULT_CAP * 4);
    expect(size).toBeLessThanOrEqual(cap);
    expect(textOf(result)).toContain('Cut to fit 1024 KiB per result');
    // The other connection keeps the default.
    expect(sizeOf(await shim.call('run_query', { sql: MANY, maxRows: 10_000 }))).toBeLessThanOrEqual(DEFAULT_CAP);
    const bad = await home.run(['set', 'roomy', '--max-result-bytes', '99999999']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/4096 to 4194304/);
    await home.ok(['set', 'roomy', '--max-result-bytes', 'default']);
    expect(sizeOf(await shim.call('run_query', { sql: MANY, maxRows: 10_000, connection: 'roomy' }))).toBeLessThanOrEqual(DEFAULT_CAP);
  });
});
