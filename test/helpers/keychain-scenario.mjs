// Runs inside a private D-Bus session with an unlocked gnome-keyring (see keychain.test.ts):
// exercises hanactl with no HANACTL_REGISTRY_KEY, so the key must come from the keychain.
import { execFileSync, spawnSync } from 'node:child_process';

const bin = process.argv[2];
const home = process.env.HANACTL_HOME;
const run = (...args) => {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', env: process.env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const out = {};
out.add = run('add', 'kc', 'sqlite::memory:', '--description', 'kept across restarts');
out.status1 = run('daemon', 'status', '--json');
out.stop1 = run('daemon', 'stop');
out.start2 = run('daemon', 'start');
out.list2 = run('list', '--json');
out.status2 = run('daemon', 'status', '--json');
out.stop2 = run('daemon', 'stop');
try {
  out.stored = execFileSync('secret-tool', ['lookup', 'service', 'hanactl', 'username', `registry:${home}`], { encoding: 'utf8' });
} catch (err) {
  out.stored = `lookup failed: ${err.message}`;
}
process.stdout.write(JSON.stringify(out));
