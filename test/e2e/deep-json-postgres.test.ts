/**
 * A jsonb value thousands of levels deep is valid, and a read of it answers: the first levels as
 * structure, the rest as JSON text, through the real shim and daemon (it used to fail the read with
 * the engine's own "Maximum call stack size exceeded").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_deepjson_${process.pid}`;
const DEEP = "(pg_catalog.repeat('[', 3000) || pg_catalog.repeat(']', 3000))::jsonb";

describe.skipIf(!available)('deeply nested JSON values on PostgreSQL', { timeout: 120_000 }, () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, [`CREATE TABLE docs (id int, doc jsonb)`, `INSERT INTO docs VALUES (1, ${DEEP})`]);
    await home.ok(['add', '--no-test', '--no-password', 'deep', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'deep']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['run_query', { sql: `SELECT ${DEEP} AS a` }],
    ['run_query', { sql: 'SELECT doc FROM docs' }],
    ['sample_rows', { table: 'docs' }],
  ])('%s answers %j', async (tool, args) => {
    const result = await shim.call(tool, args);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).not.toMatch(/call stack|QUERY_FAILED/);
    expect(JSON.stringify(result.structuredContent)).toContain('[[[');
  });

  it('still answers the next call', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT 1 AS one' });
    expect(result.structuredContent).toMatchObject({ rows: [{ one: 1 }] });
  });
});
