import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

describe('list_connections asks for trust only where there are connection files', () => {
  const home = new TestHome();
  const shims: ShimHandle[] = [];
  const empty = join(home.dir, 'empty');
  const withEnv = join(home.dir, 'with-env');

  beforeAll(async () => {
    mkdirSync(empty);
    mkdirSync(withEnv);
    writeFileSync(join(withEnv, '.env'), 'HANA_HOST=localhost\n');
    await home.ok(['add', '--no-test', 'reg', `sqlite:${join(home.dir, 'reg.db')}`]);
  });

  afterAll(async () => {
    for (const shim of shims) await shim.close();
    await home.dispose();
  });

  const listIn = async (project: string) => {
    const shim = await startShim(home.env, ['--project', project]);
    shims.push(shim);
    return shim.call('list_connections');
  };

  it.each([
    ['/', '/'],
    ['an empty folder', empty],
  ])('says nothing about trust for %s', async (_label, folder) => {
    const result = await listIn(folder);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain('reg');
    expect(textOf(result)).not.toMatch(/trust/i);
    expect(result.structuredContent).toMatchObject({ project: { status: 'none' } });
  });

  it('still names `hanactl trust` for a folder holding a .env', async () => {
    const result = await listIn(withEnv);
    expect(textOf(result)).toContain(`${home.cli} trust ${withEnv}`);
    expect(result.structuredContent).toMatchObject({ project: { status: 'untrusted' } });
  });
});
