import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { OFF_THREAD_CHARS, OffThreadPolicy } from '../../../daemon/policy/off-thread.js';
import { createReadCheck, createStatementPolicy } from '../../../daemon/policy-wiring.js';
import { REPO } from '../../helpers/hanactl-home.js';

/**
 * Which statements leave the event loop: by measured cost, every statement of 1 KB or more (the
 * costliest shapes cost about 2 ms per KB on the loop), for run_query and explain_query alike;
 * shorter ones, most of what agents send, are judged on the loop.
 */
const built = join(REPO, 'dist/daemon/policy/policy-worker.js');
const worker = new OffThreadPolicy(pathToFileURL(built));
afterAll(() => worker.close());

const options = { dialect: 'postgres', allowWrite: false } as const;
const long = `SELECT ${'1,'.repeat(OFF_THREAD_CHARS / 2)}1`;

it('keeps statements under 1 KB on the loop and keeps the threshold there', () => {
  expect(OFF_THREAD_CHARS).toBe(1024);
});

it.skipIf(!existsSync(built))('judges run_query statements of 1 KB or more on the worker thread (run `npm run build` first)', async () => {
  const policy = createStatementPolicy(worker);
  const before = worker.answered;
  expect(await policy.check('SELECT 1', options)).toBe('read');
  expect(worker.answered).toBe(before);
  expect(await policy.check(long, options)).toBe('read');
  await expect(Promise.resolve().then(() => policy.check(`${long}; DELETE FROM t`, options))).rejects.toMatchObject({
    code: 'STATEMENT_REFUSED',
  });
  expect(worker.answered).toBe(before + 2);
});

it.skipIf(!existsSync(built))('judges explain_query statements of 1 KB or more on the worker thread too', async () => {
  const check = createReadCheck(worker);
  const before = worker.answered;
  expect(await check('SELECT 1', 'postgres')).toEqual({ ok: true, kind: 'read' });
  expect(worker.answered).toBe(before);
  expect(await check(long, 'postgres')).toEqual({ ok: true, kind: 'read' });
  expect(await check(`${long}, pg_sleep(1)`, 'postgres')).toMatchObject({ ok: false });
  expect(worker.answered).toBe(before + 2);
});
