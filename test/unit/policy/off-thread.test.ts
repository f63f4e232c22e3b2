import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { checkStatement } from '../../../daemon/policy/index.js';
import { OffThreadPolicy } from '../../../daemon/policy/off-thread.js';
import { REPO } from '../../helpers/hanactl-home.js';

const CASES = [
  ['SELECT 1', { dialect: 'postgres', allowWrite: false }],
  [`SELECT ${'a '.repeat(200_000)}`, { dialect: 'postgres', allowWrite: false }],
  ["SELECT MASTER_GTID_WAIT('0-1-1')", { dialect: 'mysql', allowWrite: true }],
  ['DELETE FROM t', { dialect: 'sqlite', allowWrite: false }],
] as const;

let policy: OffThreadPolicy | undefined;
afterEach(async () => {
  await policy?.close();
  policy = undefined;
});

const built = join(REPO, 'dist/daemon/policy/policy-worker.js');

it.skipIf(!existsSync(built))('a worker thread gives the verdicts the check gives on the loop (run `npm run build` first)', async () => {
  policy = new OffThreadPolicy(pathToFileURL(built));
  for (const [sql, options] of CASES) expect(await policy.check(sql, options)).toEqual(checkStatement(sql, options));
  expect(policy.answered).toBe(CASES.length);
});

it('a worker that cannot start still gives every verdict, judged on the loop', async () => {
  policy = new OffThreadPolicy(pathToFileURL(join(REPO, 'no-such-worker.js')));
  const verdicts = await Promise.all(CASES.map(([sql, options]) => policy?.check(sql, options)));
  expect(verdicts).toEqual(CASES.map(([sql, options]) => checkStatement(sql, options)));
  expect(policy.answered).toBe(0);
});
