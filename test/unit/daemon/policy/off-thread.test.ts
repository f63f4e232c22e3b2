import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { asCheckOwner } from '../../../../daemon/policy/check-owner.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { OffThreadPolicy } from '../../../../daemon/policy/off-thread.js';
import { REPO } from '../../../helpers/hanactl-home.js';

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

const scripted = pathToFileURL(join(REPO, 'test/fixtures/scripted-check-worker.mjs'));
const PG = { dialect: 'postgres', allowWrite: false } as const;

it('a free worker takes the next session in turn: one session with many statements waiting does not delay another', async () => {
  policy = new OffThreadPolicy(scripted, { workers: 1 });
  const p = policy;
  const order: string[] = [];
  const send = (owner: string, sql: string) => asCheckOwner(owner, () => p.check(sql, PG)).then(() => order.push(`${owner}:${sql}`));
  await Promise.all([send('a', 'a1'), send('a', 'a2'), send('a', 'a3'), send('b', 'b1')]);
  expect(order).toEqual(['a:a1', 'b:b1', 'a:a2', 'a:a3']);
});

it('one more statement than a session may have waiting is refused with the limit named; others still get theirs checked', async () => {
  policy = new OffThreadPolicy(scripted, { workers: 1, maxWaiting: 2, deadlineMs: 500 });
  const p = policy;
  const held = asCheckOwner('a', () => p.check('spin', PG)); // holds the only worker until its deadline
  const waiting = [asCheckOwner('a', () => p.check('a1', PG)), asCheckOwner('a', () => p.check('a2', PG))];
  await expect(asCheckOwner('a', () => p.check('a3', PG))).rejects.toMatchObject({
    code: 'TOO_MANY_CALLS',
    message: expect.stringContaining('2 long statements waiting'),
  });
  const other = asCheckOwner('b', () => p.check('b1', PG));
  expect(await held).toMatchObject({ ok: false, rule: 'check-too-long' });
  expect(await Promise.all([...waiting, other])).toEqual(Array(3).fill({ ok: true, kind: 'read' }));
});

it('a check past its deadline is abandoned: the statement is refused, and the next one gets a new worker', async () => {
  policy = new OffThreadPolicy(scripted, { workers: 1, deadlineMs: 300 });
  const refused = await policy.check('spin', PG);
  expect(refused).toMatchObject({ ok: false, rule: 'check-too-long', message: expect.stringContaining('longer than 300 ms') });
  expect(await policy.check('SELECT 1', PG)).toEqual({ ok: true, kind: 'read' });
  expect(policy.answered).toBe(1);
});
