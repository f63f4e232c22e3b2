import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, REPO, TestHome } from '../helpers/hanactl-home.js';

const hasKeyring =
  spawnSync('sh', ['-c', 'command -v dbus-run-session && command -v gnome-keyring-daemon && command -v secret-tool']).status === 0;
if (!hasKeyring) {
  if (process.env.CI)
    throw new Error('CI needs gnome-keyring, libsecret-tools and dbus-x11 for the keychain tests (.ci/run installs them).');
  console.warn('Skipping keychain key-rotation tests: install gnome-keyring libsecret-tools dbus-x11 to run them.');
}

describe.skipIf(!hasKeyring)('key rotate, export and import with the registry key in a real OS keychain (gnome-keyring over D-Bus)', () => {
  const home = new TestHome({ keyInEnv: false });
  afterAll(() => home.dispose());

  it('rotates in one step, keeps the connections, and moves the registry to a second home’s keychain entry', () => {
    const script = join(REPO, 'test/helpers/key-keychain-scenario.mjs');
    const result = spawnSync(
      'dbus-run-session',
      [
        '--',
        'sh',
        '-c',
        `echo -n test | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1; exec "${process.execPath}" "${script}" "${BIN}" "${REPO}"`,
      ],
      // A keyring of its own under the test home: the person's keyring is never touched.
      { encoding: 'utf8', env: { ...home.env, XDG_DATA_HOME: join(home.dir, 'xdg-data') }, timeout: 120_000 },
    );
    expect(result.status, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.add.code, out.add.stderr).toBe(0);
    expect(out.rotate.code, out.rotate.stderr).toBe(0);
    expect(out.rotate.stdout).toMatch(/stored in the OS keychain/);
    // The keychain entry changed, the next slot is empty again, nothing printed.
    expect(Buffer.from(out.oldKey, 'base64')).toHaveLength(32);
    expect(Buffer.from(out.newKey, 'base64')).toHaveLength(32);
    expect(out.newKey).not.toBe(out.oldKey);
    expect(out.nextAfterRotate).toBeNull();
    expect(out.rotate.stdout).not.toContain(out.newKey);
    // Connections intact before and after a restart; the old key no longer opens the registry.
    const kc = [expect.objectContaining({ name: 'kc', description: 'kept across rotation' })];
    expect(JSON.parse(out.listWhileRunning.stdout).connections).toEqual(kc);
    expect(out.oldOpens).toBe(false);
    expect(out.newOpens).toBe(true);
    expect(out.listAfterRestart.code, out.listAfterRestart.stderr).toBe(0);
    expect(JSON.parse(out.listAfterRestart.stdout).connections).toEqual(kc);
    expect(JSON.parse(out.status.stdout).keySource).toBe('keychain');
    // Export, then import into another home: its own keychain account holds the key.
    expect(out.export.code, out.export.stderr).toBe(0);
    expect(out.import.code, out.import.stderr).toBe(0);
    expect(out.secondKey).toBe(out.newKey);
    expect(out.secondNext).toBeNull();
    expect(JSON.parse(out.secondList.stdout).connections).toEqual(kc);
  });
});
