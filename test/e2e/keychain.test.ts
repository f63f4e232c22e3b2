import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';

const hasKeyring =
  spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v gnome-keyring-daemon && command -v secret-tool']).status === 0;
if (!hasKeyring) {
  if (process.env.CI)
    throw new Error('CI needs gnome-keyring, libsecret-tools and dbus-x11 for the keychain tests (.ci/run installs them).');
  console.warn('Skipping keychain tests: install gnome-keyring libsecret-tools dbus-x11 to run them.');
}

describe.skipIf(!hasKeyring)('the registry key in a real OS keychain (gnome-keyring over D-Bus)', () => {
  const home = new TestHome({ keyInEnv: false });
  afterAll(() => home.dispose());

  it('stores the key in the keychain, restarts, and reads the registry back', () => {
    const script = join(REPO, 'test/helpers/keychain-scenario.mjs');
    const result = spawnSync(
      'dbus-run-session',
      [
        '--',
        'sh',
        '-c',
        `echo -n test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec "${process.execPath}" "${script}" "${BIN}"`,
      ],
      // A keyring of its own under the test home: the person's keyring is never touched.
      { encoding: 'utf8', env: { ...home.env, XDG_DATA_HOME: join(home.dir, 'xdg-data') }, timeout: 60_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.add.code, out.add.stderr).toBe(0);
    expect(JSON.parse(out.status1.stdout)).toMatchObject({ running: true, keySource: 'keychain' });
    expect(out.stop1.code).toBe(0);
    expect(out.start2.code, out.start2.stderr).toBe(0);
    expect(JSON.parse(out.list2.stdout).connections).toEqual([
      expect.objectContaining({ name: 'kc', description: 'kept across restarts' }),
    ]);
    expect(JSON.parse(out.status2.stdout).keySource).toBe('keychain');
    // The keychain holds base64 of a 32-byte key for this home.
    expect(Buffer.from(out.stored.trim(), 'base64')).toHaveLength(32);
  });
});
