// Runs inside a private D-Bus session with an unlocked gnome-keyring (see
// operator-cli-key-keychain.test.ts): rotates, exports and imports the registry key with the
// OS keychain as the key source, and reports what it saw as JSON.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [bin, repo] = process.argv.slice(2);
const home = process.env.HANACTL_HOME;
const second = join(home, 'second');
const run = (args, options = {}) => {
  const r = spawnSync(process.execPath, [bin, ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...options.env },
    input: options.input ?? '',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};
const lookup = (account) => {
  const r = spawnSync('secret-tool', ['lookup', 'service', 'hanactl', 'username', account], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
};
const { Registry } = await import(pathToFileURL(join(repo, 'dist/daemon/registry/registry.js')).href);
const opens = (key) => (key ? Registry.opensWith(join(home, 'registry.db'), Buffer.from(key, 'base64'), true) : false);

const out = {};
out.add = run(['add', 'kc', 'sqlite::memory:', '--description', 'kept across rotation']);
out.oldKey = lookup(`registry:${home}`);
out.rotate = run(['key', 'rotate']);
out.newKey = lookup(`registry:${home}`);
out.nextAfterRotate = lookup(`registry-next:${home}`);
out.listWhileRunning = run(['list', '--json']);
out.stop = run(['daemon', 'stop']);
out.oldOpens = opens(out.oldKey);
out.newOpens = opens(out.newKey);
out.listAfterRestart = run(['list', '--json']);
out.status = run(['daemon', 'status', '--json']);
out.export = run(['key', 'export', '--out', join(home, 'moved.json'), '--passphrase-stdin'], { input: 'a passphrase for the move\n' });
run(['daemon', 'stop']);
out.import = run(['key', 'import', '--in', join(home, 'moved.json'), '--passphrase-stdin'], {
  env: { HANACTL_HOME: second },
  input: 'a passphrase for the move\n',
});
out.secondKey = lookup(`registry:${second}`);
out.secondNext = lookup(`registry-next:${second}`);
out.secondList = run(['list', '--json'], { env: { HANACTL_HOME: second } });
run(['daemon', 'stop'], { env: { HANACTL_HOME: second } });
process.stdout.write(JSON.stringify(out));
