/**
 * The committed classification of PostgreSQL's functions (daemon/policy/pg-functions.generated.ts)
 * is what the script makes of the live server's pg_proc and views today (the functions and views
 * that show secrets or other sessions' statement text included): a server with functions nobody
 * reviewed, or a file left behind after the reviewed lists changed, fails here with the command
 * that regenerates it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations
import { generate, REGENERATE } from '../../scripts/policy/pg-functions.mjs';
import { serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const committed = readFileSync(new URL('../../daemon/policy/pg-functions.generated.ts', import.meta.url), 'utf8');

describe.skipIf(!available)('the generated PostgreSQL function classification', () => {
  test('equals what the script reads from the live server (with every extension it offers)', async () => {
    const { text, problems, version } = (await generate()) as { text: string; problems: string[]; version: string };
    expect(problems, `functions of PostgreSQL ${version} that need a review in scripts/policy/pg-functions.mjs`).toEqual([]);
    expect(
      text === committed,
      `pg-functions.generated.ts is out of date for PostgreSQL ${version}; regenerate it with: ${REGENERATE}`,
    ).toBe(true);
  }, 60_000);
});
