import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from '../../daemon/registry/registry.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { closedPort } from '../helpers/ports.js';

const NO_KEYCHAIN = { DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent/bus' };
const PASSPHRASE = 'correct horse battery staple';

interface Info {
  name: string;
  hasPassword: boolean;
  description?: string;
  url: string;
}
const listOf = async (home: TestHome, env: NodeJS.ProcessEnv = {}): Promise<Info[]> => {
  const r = await home.run(['list', '--json'], { env });
  if (r.code !== 0) throw new Error(`list failed: ${r.stderr}`);
  return JSON.parse(r.stdout).connections;
};
const summary = (list: Info[]) => list.map((c) => ({ name: c.name, hasPassword: c.hasPassword, description: c.description, url: c.url }));
const keyFile = (home: TestHome, name = 'registry.key') => Buffer.from(readFileSync(join(home.dir, name), 'utf8').trim(), 'base64');

/** Two connections, one with a stored password, so "intact" means names, settings and secrets. */
async function seed(home: TestHome, marker = `pw-${randomBytes(6).toString('hex')}`): Promise<void> {
  const port = await closedPort();
  await home.ok(['add', '--no-test', 'mem', 'sqlite::memory:', '--description', 'in memory']);
  await home.ok(['add', '--no-test', 'pg', `postgres://app@127.0.0.1:${port}/shop`, '--password-stdin', '--description', 'has a secret'], {
    input: marker,
  });
}

describe('key rotate with HANACTL_REGISTRY_KEY as the key source', () => {
  const home = new TestHome();
  const oldKey = Buffer.from(home.env.HANACTL_REGISTRY_KEY as string, 'base64');
  let before: Info[];
  let newKey: string;
  afterAll(() => home.dispose());

  beforeAll(async () => {
    await seed(home);
    before = await listOf(home);
  });

  it('refuses without --print-new-key, saying why, and changes nothing', async () => {
    const r = await home.run(['key', 'rotate']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HANACTL_REGISTRY_KEY.*which hanactl cannot change.*--print-new-key/s);
    expect(r.stderr).toMatch(/If the key is lost, the registry cannot be read again/);
    expect(Registry.opensWith(join(home.dir, 'registry.db'), oldKey)).toBe(true);
  });

  it('with --print-new-key prints the new key once on stdout, and the running daemon keeps serving', async () => {
    const r = await home.run(['key', 'rotate', '--print-new-key']);
    expect(r.code, r.stderr).toBe(0);
    newKey = r.stdout.trim();
    expect(Buffer.from(newKey, 'base64')).toHaveLength(32);
    expect(r.stderr).toMatch(/Set HANACTL_REGISTRY_KEY to the key below/);
    expect(summary(await listOf(home))).toEqual(summary(before));
    expect((await home.run(['test', 'mem'])).code).toBe(0);
  });

  it('after a stop, the old key no longer opens the registry and the new one does', async () => {
    await home.ok(['daemon', 'stop']);
    const registry = join(home.dir, 'registry.db');
    expect(Registry.opensWith(registry, oldKey)).toBe(false);
    expect(Registry.opensWith(registry, Buffer.from(newKey, 'base64'), true)).toBe(true);
    const refused = await home.run(['daemon', 'start']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cannot be opened with the key/);
  });

  it('restarted with the printed key, every connection is intact, secrets included', async () => {
    const env = { HANACTL_REGISTRY_KEY: newKey };
    const start = await home.run(['daemon', 'start'], { env });
    expect(start.code, start.stderr).toBe(0);
    expect(summary(await listOf(home, env))).toEqual(summary(before));
    expect((await listOf(home, env)).find((c) => c.name === 'pg')?.hasPassword).toBe(true);
    await home.run(['daemon', 'stop'], { env });
  });
});

describe('key rotate with an opted-in key file', () => {
  const home = new TestHome({ keyInEnv: false, extraEnv: NO_KEYCHAIN });
  afterAll(() => home.dispose());

  it('stores the new key in the key file in one step; connections intact across a restart', async () => {
    await home.ok(['daemon', 'start', '--key-file']);
    await seed(home);
    const before = await listOf(home);
    const oldKey = keyFile(home);
    const r = await home.run(['key', 'rotate']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/re-encrypted under a new key, stored in the key file; the old key no longer opens it/);
    const newKey = keyFile(home);
    expect(newKey.equals(oldKey)).toBe(false);
    expect(existsSync(join(home.dir, 'registry.key-next'))).toBe(false);
    expect(statSync(join(home.dir, 'registry.key')).mode & 0o777).toBe(0o600);
    await home.ok(['daemon', 'stop']);
    expect(Registry.opensWith(join(home.dir, 'registry.db'), oldKey)).toBe(false);
    expect(Registry.opensWith(join(home.dir, 'registry.db'), newKey, true)).toBe(true);
    expect(summary(await listOf(home))).toEqual(summary(before));
  });

  it('finishes a rotation interrupted between the rekey and storing the key, at the next start', async () => {
    await home.ok(['daemon', 'stop']);
    const before = await listOf(home);
    await home.ok(['daemon', 'stop']);
    // The state a crash after step 2 leaves: registry rekeyed, new key only in the next slot.
    const oldKey = keyFile(home);
    const next = randomBytes(32);
    writeFileSync(join(home.dir, 'registry.key-next'), `${next.toString('base64')}\n`, { mode: 0o600 });
    const registry = Registry.open(join(home.dir, 'registry.db'), oldKey);
    registry.rekey(next);
    registry.close();

    expect(summary(await listOf(home))).toEqual(summary(before));
    expect(keyFile(home).equals(next)).toBe(true);
    expect(existsSync(join(home.dir, 'registry.key-next'))).toBe(false);
    const logs = await home.ok(['daemon', 'logs', '--json']);
    expect(logs.stdout).toMatch(/finished an interrupted key change/);
  });

  it('drops a next key left by a rotation interrupted before the rekey', async () => {
    await home.ok(['daemon', 'stop']);
    const current = keyFile(home);
    writeFileSync(join(home.dir, 'registry.key-next'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    expect((await listOf(home)).length).toBe(2);
    expect(keyFile(home).equals(current)).toBe(true);
    expect(existsSync(join(home.dir, 'registry.key-next'))).toBe(false);
  });
});

describe('key export and import move the registry to a fresh home', () => {
  const marker = `pw-${randomBytes(8).toString('hex')}`;
  const source = new TestHome();
  const target = new TestHome({ keyInEnv: false, extraEnv: NO_KEYCHAIN });
  const envTarget = new TestHome();
  const exportFile = join(source.dir, 'moved.json');
  let before: Info[];
  afterAll(async () => {
    await Promise.all([source.dispose(), target.dispose(), envTarget.dispose()]);
  });

  beforeAll(async () => {
    await seed(source, marker);
    before = await listOf(source);
  });

  it('refuses a passphrase typed as an argument, an empty one, and one too short', async () => {
    expect((await source.run(['key', 'export', '--out', exportFile, '--passphrase', PASSPHRASE])).code).toBe(2);
    expect((await source.run(['key', 'export', '--out', exportFile, '--passphrase-stdin'], { input: '' })).stderr).toMatch(
      /stdin was empty/,
    );
    const short = await source.run(['key', 'export', '--out', exportFile, '--passphrase-stdin'], { input: 'short\n' });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/at least 8 characters/);
    const noTty = await source.run(['key', 'export', '--out', exportFile]);
    expect(noTty.stderr).toMatch(/without a terminal.*--passphrase-stdin/);
    expect(existsSync(exportFile)).toBe(false);
  });

  it('exports one 0600 file in which neither the key nor any secret is readable', async () => {
    const r = await source.run(['key', 'export', '--out', exportFile, '--passphrase-stdin'], { input: `${PASSPHRASE}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/hanactl(?:\.js)? key import --in/);
    expect(statSync(exportFile).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(readFileSync(exportFile, 'utf8'));
    expect(doc).toMatchObject({ format: 'hanactl-registry-export', version: 1, kdf: { name: 'scrypt' }, cipher: { name: 'aes-256-gcm' } });
    const everything = Buffer.concat([readFileSync(exportFile), Buffer.from(doc.registry.bytes, 'base64')]);
    for (const secret of [marker, 'has a secret', source.env.HANACTL_REGISTRY_KEY as string])
      expect(everything.includes(Buffer.from(secret)), secret).toBe(false);
    expect((await source.run(['key', 'export', '--out', exportFile, '--passphrase-stdin'], { input: PASSPHRASE })).stderr).toMatch(
      /already exists.*--force/,
    );
  });

  it('refuses a wrong passphrase and writes nothing', async () => {
    const r = await target.run(['key', 'import', '--in', exportFile, '--passphrase-stdin', '--key-file'], {
      input: 'not the passphrase\n',
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Wrong passphrase.*nothing was written/);
    expect(existsSync(join(target.dir, 'registry.db'))).toBe(false);
    expect(existsSync(join(target.dir, 'registry.key'))).toBe(false);
  });

  it('imports with the right passphrase: the same connections, secrets included, under this home’s key source', async () => {
    const r = await target.run(['key', 'import', '--in', exportFile, '--passphrase-stdin', '--key-file'], { input: `${PASSPHRASE}\n` });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/its key is in the key file/);
    expect(summary(await listOf(target))).toEqual(summary(before));
    expect(JSON.parse((await target.ok(['daemon', 'status', '--json'])).stdout).keySource).toBe('file');
    expect(Registry.opensWith(join(target.dir, 'registry.db'), keyFile(target), true)).toBe(true);
  });

  it('refuses to import while the daemon runs, and over an existing registry without --force', async () => {
    const running = await target.run(['key', 'import', '--in', exportFile, '--passphrase-stdin', '--force'], { input: PASSPHRASE });
    expect(running.code).toBe(1);
    expect(running.stderr).toMatch(/daemon is running; stop it first with `[^`]*hanactl(?:\.js)? daemon stop`/);
    await target.ok(['daemon', 'stop']);
    const existing = await target.run(['key', 'import', '--in', exportFile, '--passphrase-stdin'], { input: PASSPHRASE });
    expect(existing.code).toBe(1);
    expect(existing.stderr).toMatch(/A registry already exists.*--force/);
    const forced = await target.run(['key', 'import', '--in', exportFile, '--passphrase-stdin', '--force'], { input: PASSPHRASE });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toMatch(/the previous one is replaced/);
    expect(summary(await listOf(target))).toEqual(summary(before));
  });

  it('into a home keyed by HANACTL_REGISTRY_KEY: refuses without --print-new-key, then prints the key to set', async () => {
    const refused = await envTarget.run(['key', 'import', '--in', exportFile, '--passphrase-stdin'], { input: PASSPHRASE });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cannot set.*--print-new-key.*Nothing was written/s);
    expect(existsSync(join(envTarget.dir, 'registry.db'))).toBe(false);
    const r = await envTarget.run(['key', 'import', '--in', exportFile, '--passphrase-stdin', '--print-new-key'], { input: PASSPHRASE });
    expect(r.code, r.stderr).toBe(0);
    const printed = r.stdout.split('\n').find((l) => /^[A-Za-z0-9+/]{43}=$/.test(l));
    expect(printed).toBeDefined();
    expect(summary(await listOf(envTarget, { HANACTL_REGISTRY_KEY: printed }))).toEqual(summary(before));
    await envTarget.run(['daemon', 'stop']);
  });
});
