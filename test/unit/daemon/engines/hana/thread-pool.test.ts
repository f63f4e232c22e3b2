import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_POOL_OPTIONS } from '../../../../../daemon/pools/pool.js';
import { resolvePaths } from '../../../../../shared/paths.js';

const require = createRequire(import.meta.url);
const threadPool = require('../../../../../bin/thread-pool.cjs') as {
  DEFAULT_POOL_MAX: number;
  configuredPoolMax(env: NodeJS.ProcessEnv): number;
  sizeThreadPool(env: NodeJS.ProcessEnv): number;
  threadPoolSize(poolMax: number, current?: string): number;
};
const PROBE = join(import.meta.dirname, '../../../../fixtures/thread-pool-probe.cjs');

const temps: string[] = [];
let child: ReturnType<typeof execFile> | undefined;
afterEach(() => {
  // Also when the test timed out waiting: the probe never outlives it.
  child?.kill('SIGKILL');
  child = undefined;
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-tp-'));
  temps.push(dir);
  return dir;
}

describe('the thread-pool size the entry sets', () => {
  it('is a thread per statement and per cancel of a full pool, plus Node’s own four', () => {
    expect(threadPool.threadPoolSize(10)).toBe(24);
    expect(threadPool.threadPoolSize(1)).toBe(6);
    expect(threadPool.threadPoolSize(1000)).toBe(1024);
  });

  it('keeps a size the person set when it is large enough, and raises one that is not', () => {
    expect(threadPool.threadPoolSize(10, '64')).toBe(64);
    expect(threadPool.threadPoolSize(10, '8')).toBe(24);
    expect(threadPool.threadPoolSize(10, 'many')).toBe(24);
    expect(threadPool.threadPoolSize(10, '4096')).toBe(24);
  });

  it('reads pool.max from the config of the home shared/paths.ts resolves, with the daemon’s default', () => {
    expect(threadPool.DEFAULT_POOL_MAX).toBe(DEFAULT_POOL_OPTIONS.max);
    const home = temp();
    expect(resolvePaths({ HANACTL_HOME: home }).config).toBe(join(home, 'config.json'));
    expect(threadPool.configuredPoolMax({ HANACTL_HOME: home })).toBe(10);
    writeFileSync(join(home, 'config.json'), JSON.stringify({ pool: { max: 30 } }));
    const env: NodeJS.ProcessEnv = { HANACTL_HOME: home, UV_THREADPOOL_SIZE: '16' };
    expect(threadPool.sizeThreadPool(env)).toBe(64);
    expect(env).toMatchObject({ UV_THREADPOOL_SIZE: '64', HDB_NODEJS_THREADPOOL_SIZE: '60' });
    const own: NodeJS.ProcessEnv = { HANACTL_HOME: home, UV_THREADPOOL_SIZE: '100', HDB_NODEJS_THREADPOOL_SIZE: '50' };
    threadPool.sizeThreadPool(own);
    expect(own).toMatchObject({ UV_THREADPOOL_SIZE: '100', HDB_NODEJS_THREADPOOL_SIZE: '50' });
  });

  it.skipIf(process.platform === 'win32')(
    'leaves a thread for a cancel while a full pool’s statements hold theirs (the entry’s first line, in a real process)',
    async () => {
      const dir = temp();
      const home = join(dir, 'home');
      mkdirSync(home);
      const busy = DEFAULT_POOL_OPTIONS.max;
      for (let i = 0; i < busy; i++) execFileSync('mkfifo', [join(dir, `f${i}`)]);
      // Node's default of 4 (what an unsized daemon has): four blocked statements would starve the cancel.
      const env = { ...process.env, HANACTL_HOME: home, UV_THREADPOOL_SIZE: '4' };
      const out = await new Promise<string>((resolveOut, reject) => {
        child = execFile(process.execPath, [PROBE, dir, String(busy)], { env }, (err, stdout) => (err ? reject(err) : resolveOut(stdout)));
      });
      expect(out).toBe(`cancel ran with ${busy} busy\n`);
    },
  );
});
