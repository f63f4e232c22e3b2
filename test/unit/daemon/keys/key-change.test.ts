import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KeyService } from '../../../../daemon/keys/key-service.js';
import { type KeySlots, keySlots } from '../../../../daemon/keys/key-slots.js';
import type { WritableKeyStore } from '../../../../daemon/keys/key-store.js';
import { openRegistry } from '../../../../daemon/keys/open-registry.js';
import { makeRecord } from '../../../../daemon/registry/connection-record.js';
import { Registry } from '../../../../daemon/registry/registry.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { HanactlError } from '../../../../shared/errors.js';
import { type Paths, resolvePaths } from '../../../../shared/paths.js';

const root = mkdtempSync(join(tmpdir(), 'hanactl-keychange-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** A home whose key is in an opted-in key file (`registry.key`, next slot `registry.key-next`). */
function home(): { paths: Paths; slots: KeySlots } {
  const dir = join(root, `home-${++n}`);
  mkdirSync(dir, { mode: 0o700 });
  const paths = resolvePaths({ HANACTL_HOME: dir });
  return { paths, slots: keySlots(paths, {}, true) };
}

const record = (name: string) =>
  makeRecord(
    {
      name,
      target: parseConnectionUrl('postgres://app@db.example/shop').target,
      allowWrite: false,
      context: [],
      createdAt: '2025-01-01T00:00:00.000Z',
    },
    `pw-${name}`,
  );
const keyIn = (path: string) => Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
const warnings: string[] = [];
const log = { warn: (_f: Record<string, unknown>, m: string) => void warnings.push(m), info() {}, error() {} };

async function seeded(): Promise<{ paths: Paths; slots: KeySlots; key: Buffer }> {
  const h = home();
  const reg = await openRegistry(h.slots, h.paths.registry);
  reg.put(record('shop'), false);
  reg.close();
  return { ...h, key: keyIn(h.paths.keyFile) };
}

describe('the next-key slots', () => {
  it('names the keychain account registry-next:<home> (never another home’s account) and the file registry.key-next', async () => {
    const { nextKeychainAccount, keychainAccount, nextKeyFile } = await import('../../../../daemon/keys/key-slots.js');
    const paths = resolvePaths({ HANACTL_HOME: '/h/a' });
    expect(keychainAccount(paths)).toBe('registry:/h/a');
    expect(nextKeychainAccount(paths)).toBe('registry-next:/h/a');
    expect(nextKeychainAccount(paths)).not.toBe(keychainAccount(resolvePaths({ HANACTL_HOME: '/h/a-next' })));
    expect(nextKeyFile(paths)).toBe('/h/a/registry.key-next');
    expect(keySlots(paths, { HANACTL_REGISTRY_KEY: randomBytes(32).toString('base64') }, true).next).toBeUndefined();
  });
});

describe('KeyService.rotate with a key file', () => {
  it('rekeys, stores the new key, empties the next slot; the old key no longer opens the registry', async () => {
    const { paths, slots, key: oldKey } = await seeded();
    const registry = await openRegistry(slots, paths.registry);
    const service = new KeyService({ slots, registry, registryPath: paths.registry, hanactlVersion: 't' });
    const result = await service.rotate();
    expect(result).toMatchObject({ keySource: 'file' });
    expect(result.newKey).toBeUndefined();
    const newKey = keyIn(paths.keyFile);
    expect(newKey.equals(oldKey)).toBe(false);
    expect(statSync(paths.keyFile).mode & 0o777).toBe(0o600);
    expect(existsSync(`${paths.keyFile}-next`)).toBe(false);
    expect(registry.get('shop')?.password).toBe('pw-shop');
    registry.close();
    expect(Registry.opensWith(paths.registry, oldKey)).toBe(false);
    expect(Registry.opensWith(paths.registry, newKey, true)).toBe(true);
  });

  it('with HANACTL_REGISTRY_KEY: refuses without printNewKey, and returns the key with it', async () => {
    const h = home();
    const envKey = randomBytes(32);
    const slots = keySlots(h.paths, { HANACTL_REGISTRY_KEY: envKey.toString('base64') }, false);
    const registry = await openRegistry(slots, h.paths.registry);
    const service = new KeyService({ slots, registry, registryPath: h.paths.registry, hanactlVersion: 't' });
    await expect(service.rotate()).rejects.toThrow(/cannot change.*--print-new-key/s);
    expect(Registry.opensWith(h.paths.registry, envKey)).toBe(true);
    const result = await service.rotate({ printNewKey: true });
    const printed = Buffer.from(result.newKey as string, 'base64');
    expect(printed).toHaveLength(32);
    expect(Registry.opensWith(h.paths.registry, printed)).toBe(true);
    expect(Registry.opensWith(h.paths.registry, envKey)).toBe(false);
    // The environment still holds the old key: an export now is refused rather than wrapping a key that does not open it.
    await expect(service.exportRegistry('long enough')).rejects.toThrow(/does not open the registry/);
    registry.close();
  });

  it('when the new key cannot be stored after the rekey, keeps it in the next slot; the next start promotes it', async () => {
    const { paths, slots, key: oldKey } = await seeded();
    if (!slots.next) throw new Error('a key file has a next slot');
    const failing: WritableKeyStore = {
      source: 'file',
      description: 'a key file that refuses writes',
      load: () => slots.current.load(),
      save: () => Promise.reject(new Error('disk full')),
      replace: () => Promise.reject(new Error('disk full')),
      remove: () => slots.current.remove(),
    };
    const broken: KeySlots = { current: failing, next: slots.next };
    const registry = await openRegistry(slots, paths.registry);
    const service = new KeyService({ slots: broken, registry, registryPath: paths.registry, hanactlVersion: 't', log });
    const err = await service.rotate().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HanactlError);
    expect((err as Error).message).toMatch(/re-encrypted.*disk full.*next start/s);
    registry.close();
    const pending = keyIn(`${paths.keyFile}-next`);
    expect(keyIn(paths.keyFile).equals(oldKey)).toBe(true);
    expect(Registry.opensWith(paths.registry, oldKey)).toBe(false);

    warnings.length = 0;
    const reopened = await openRegistry(slots, paths.registry, log);
    expect(reopened.get('shop')?.password).toBe('pw-shop');
    reopened.close();
    expect(keyIn(paths.keyFile).equals(pending)).toBe(true);
    expect(existsSync(`${paths.keyFile}-next`)).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/interrupted key change/)]);
  });
});

describe('openRegistry after an interruption', () => {
  it('drops a next key the registry was never rekeyed to', async () => {
    const { paths, slots, key } = await seeded();
    await slots.next?.replace(randomBytes(32));
    const reg = await openRegistry(slots, paths.registry, log);
    expect(reg.get('shop')).toBeDefined();
    reg.close();
    expect(keyIn(paths.keyFile).equals(key)).toBe(true);
    expect(existsSync(`${paths.keyFile}-next`)).toBe(false);
  });

  it('refuses, changing nothing, when neither key opens the registry', async () => {
    const { paths, slots } = await seeded();
    if (!slots.next) throw new Error('a key file has a next slot');
    const [wrong, stray] = [randomBytes(32), randomBytes(32)];
    await slots.current.replace(wrong);
    await slots.next.replace(stray);
    await expect(openRegistry(slots, paths.registry, log)).rejects.toMatchObject({ code: 'REGISTRY_LOCKED' });
    expect(keyIn(paths.keyFile).equals(wrong)).toBe(true);
    expect(keyIn(`${paths.keyFile}-next`).equals(stray)).toBe(true);
  });
});
