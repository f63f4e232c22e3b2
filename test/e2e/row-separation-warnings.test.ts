/**
 * What a person is told when context values cannot separate rows, or when a setting would let the
 * planner's figures reveal them: SQLite (no grants) warns, and --max-cost with context names is
 * refused.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';

describe('hanactl add / set with context names', () => {
  const home = new TestHome();
  afterAll(() => home.dispose());

  it('warns on a SQLite file that context values do not keep callers apart', async () => {
    const added = await home.ok(['add', 'lite', 'sqlite::memory:', '--context', 'CUSTOMER_ID']);
    expect(added.stderr).toMatch(/warning: "lite" is a SQLite file, and SQLite has no grants/);
    expect(added.stderr).toMatch(/do not keep one caller from another's rows/);
    await home.ok(['add', 'lite2', 'sqlite::memory:']);
    const set = await home.ok(['set', 'lite2', '--context', 'TENANT']);
    expect(set.stderr).toMatch(/warning: "lite2" is a SQLite file, and SQLite has no grants/);
  });

  it('does not warn without context names, nor on PostgreSQL', async () => {
    expect((await home.ok(['add', 'lite3', 'sqlite::memory:'])).stderr).not.toMatch(/no grants/);
    const pg = await home.ok([
      'add',
      '--no-test',
      'pgctx',
      'postgres://app@127.0.0.1:5432/shop',
      '--no-password',
      '--context',
      'CUSTOMER_ID',
    ]);
    expect(pg.stderr).not.toMatch(/no grants/);
  });

  it('refuses --max-cost with context names, saying why and what to run', async () => {
    const refused = await home.run(['set', 'pgctx', '--max-cost', '100']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--max-cost and context names cannot be combined on "pgctx"/);
    expect(refused.stderr).toMatch(/set pgctx --no-max-cost.*set pgctx --no-context/);
    await home.ok(['add', '--no-test', 'pgcost', 'postgres://app@127.0.0.1:5432/shop', '--no-password']);
    await home.ok(['set', 'pgcost', '--max-cost', '100']);
    const context = await home.run(['set', 'pgcost', '--context', 'CUSTOMER_ID']);
    expect(context.code).toBe(1);
    expect(context.stderr).toMatch(/cannot be combined/);
    expect((await home.ok(['set', 'pgcost', '--no-max-cost', '--context', 'CUSTOMER_ID'])).stdout).toMatch(/context CUSTOMER_ID/);
  });
});
