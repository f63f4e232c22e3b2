import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EnvKeyStore } from '../../../../daemon/keys/env-key-store.js';
import { FileKeyStore } from '../../../../daemon/keys/file-key-store.js';
import { loadOrCreateKey, selectKeyStore } from '../../../../daemon/keys/resolve-key.js';
import { type ConnectionRecord, makeRecord } from '../../../../daemon/registry/connection-record.js';
import { Registry } from '../../../../daemon/registry/registry.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { HanactlError } from '../../../../shared/errors.js';

const require = createRequire(import.meta.url);
const root = mkdtempSync(join(tmpdir(), 'hanactl-registry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let folders = 0;
/** A fresh folder inside this file's temp folder. */
function folder(): string {
  const dir = join(root, `case-${++folders}`);
  mkdirSync(dir);
  return dir;
}

const newKey = (): Buffer => randomBytes(32);

function record(name: string, url: string, password?: string, extra: Partial<ConnectionRecord> = {}): ConnectionRecord {
  return makeRecord(
    {
      name,
      target: parseConnectionUrl(url).target,
      allowWrite: false,
      context: [],
      createdAt: '2024-05-01T10:00:00.000Z',
      ...extra,
    },
    password,
  );
}

async function thrown(fn: () => unknown): Promise<HanactlError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return err as HanactlError;
  }
  throw new Error('expected an error');
}

const sha256 = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string): number => statSync(path).mode & 0o777;

describe('Registry', () => {
  it('keeps what was put, across close and reopen, and forgets what was removed', async () => {
    const path = join(folder(), 'registry.db');
    const key = newKey();
    const reg = Registry.open(path, key);
    reg.put(
      record('zeta', 'postgres://app@db.example:5433/shop?sslmode=require', 's3cret', {
        description: 'shop db',
        allowWrite: true,
        context: ['CUSTOMER_ID'],
      }),
      false,
    );
    reg.put(record('alpha', 'sqlite:/var/data/app.db'), false);
    reg.close();

    const again = Registry.open(path, key);
    expect(again.list().map((r) => r.name)).toEqual(['alpha', 'zeta']);
    const zeta = again.get('zeta');
    expect(zeta).toEqual({
      name: 'zeta',
      target: {
        engine: 'postgres',
        scheme: 'postgres',
        host: 'db.example',
        port: 5433,
        user: 'app',
        database: 'shop',
        options: { sslmode: 'require' },
      },
      description: 'shop db',
      allowWrite: true,
      context: ['CUSTOMER_ID'],
      createdAt: '2024-05-01T10:00:00.000Z',
    });
    expect(zeta?.password).toBe('s3cret');
    expect(again.get('alpha')?.password).toBeUndefined();
    expect(again.get('alpha')?.target.path).toBe('/var/data/app.db');
    expect(again.get('missing')).toBeUndefined();

    expect(again.remove('zeta')).toBe(true);
    expect(again.remove('zeta')).toBe(false);
    again.close();

    const third = Registry.open(path, key);
    expect(third.list().map((r) => r.name)).toEqual(['alpha']);
    third.close();
  });

  it('refuses to overwrite an existing name without replace, keeping the old definition', async () => {
    const path = join(folder(), 'registry.db');
    const reg = Registry.open(path, newKey());
    reg.put(record('main', 'postgres://app@old.example/shop', 'old-password'), false);
    const err = await thrown(() => reg.put(record('main', 'postgres://app@new.example/shop', 'new-password'), false));
    expect(err.code).toBe('CONNECTION_EXISTS');
    expect(err.message).toContain('"main"');
    expect(err.message).toContain('--replace');
    expect(reg.get('main')?.target.host).toBe('old.example');
    expect(reg.get('main')?.password).toBe('old-password');
    expect(reg.list()).toHaveLength(1);

    reg.put(record('main', 'postgres://app@new.example/shop', 'new-password'), true);
    expect(reg.get('main')?.target.host).toBe('new.example');
    expect(reg.get('main')?.password).toBe('new-password');
    expect(reg.list()).toHaveLength(1);
    reg.close();
  });

  it('returns records whose password is readable but not enumerable', () => {
    const path = join(folder(), 'registry.db');
    const reg = Registry.open(path, newKey());
    reg.put(record('pg', 'postgres://app@db.example/shop', 'pl4nted-enum-secret'), false);
    for (const r of [reg.get('pg') as ConnectionRecord, ...reg.list()]) {
      expect(r.password).toBe('pl4nted-enum-secret');
      expect(JSON.stringify(r)).not.toContain('pl4nted-enum-secret');
      expect({ ...r }).not.toHaveProperty('password');
      expect(Object.keys(r)).not.toContain('password');
      expect(Object.entries(r).flat()).not.toContain('pl4nted-enum-secret');
    }
    reg.close();
  });

  describe('at rest', () => {
    const markers = {
      password: `pw-${randomBytes(8).toString('hex')}`,
      host: `host-${randomBytes(8).toString('hex')}.example`,
      user: `user-${randomBytes(8).toString('hex')}`,
      name: `name-${randomBytes(8).toString('hex')}`,
    };

    /** Every byte the registry left on disk: the file and any -wal/-shm beside it. */
    function bytesOnDisk(dir: string): Buffer {
      return Buffer.concat(readdirSync(dir).map((f) => readFileSync(join(dir, f))));
    }
    const url = `postgres://${markers.user}@${markers.host}:5432/shop`;

    it('holds no name, host, user or password in plain text', () => {
      const dir = folder();
      const reg = Registry.open(join(dir, 'registry.db'), newKey());
      reg.put(record(markers.name, url, markers.password), false);
      reg.close();
      const bytes = bytesOnDisk(dir);
      expect(bytes.length).toBeGreaterThan(0);
      for (const marker of Object.values(markers)) {
        expect(bytes.includes(Buffer.from(marker, 'utf8')), marker).toBe(false);
        expect(bytes.includes(Buffer.from(marker, 'utf16le')), marker).toBe(false);
      }
    });

    it('holds none of them in plain text while open either, WAL included', () => {
      const dir = folder();
      const reg = Registry.open(join(dir, 'registry.db'), newKey());
      reg.put(record(markers.name, url, markers.password), false);
      const files = readdirSync(dir);
      const bytes = bytesOnDisk(dir);
      reg.close();
      expect(files).toContain('registry.db-wal');
      for (const marker of Object.values(markers)) expect(bytes.includes(Buffer.from(marker, 'utf8')), marker).toBe(false);
    });

    it('would find the markers in an unencrypted SQLite file (the check above can fail)', () => {
      const dir = folder();
      const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => { exec(sql: string): void; close(): void };
      const db = new Database(join(dir, 'plain.db'));
      db.exec(`CREATE TABLE c (v TEXT); INSERT INTO c VALUES ('${markers.password}');`);
      db.close();
      expect(bytesOnDisk(dir).includes(Buffer.from(markers.password))).toBe(true);
    });
  });

  it('refuses a wrong key with REGISTRY_LOCKED and leaves the file byte-identical', async () => {
    const dir = folder();
    const path = join(dir, 'registry.db');
    const key = newKey();
    const reg = Registry.open(path, key);
    reg.put(record('keep', 'postgres://app@db.example/shop', 'pw'), false);
    reg.close();
    const before = sha256(path);
    const filesBefore = readdirSync(dir).sort();

    const err = await thrown(() => Registry.open(path, newKey()));
    expect(err.code).toBe('REGISTRY_LOCKED');
    expect(err.message).toContain(path);
    expect(err.message).toMatch(/left untouched/);
    expect(sha256(path)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual(filesBefore);

    const right = Registry.open(path, key);
    expect(right.get('keep')?.password).toBe('pw');
    right.close();
  });

  it('creates the registry file readable by its owner only (0600)', () => {
    const path = join(folder(), 'registry.db');
    const reg = Registry.open(path, newKey());
    reg.put(record('x', 'sqlite:/tmp/x.db'), false);
    expect(mode(path)).toBe(0o600);
    reg.close();
    expect(mode(path)).toBe(0o600);
  });

  it('keeps its WAL and shared-memory files readable by the owner only while open', () => {
    const dir = folder();
    const path = join(dir, 'registry.db');
    const reg = Registry.open(path, newKey());
    reg.put(record('x', 'sqlite:/tmp/x.db'), false);
    try {
      for (const f of readdirSync(dir)) expect([f, mode(join(dir, f))]).toEqual([f, 0o600]);
    } finally {
      reg.close();
    }
  });
});

describe('key stores', () => {
  const base = (dir: string, env: NodeJS.ProcessEnv = {}, useKeyFile = false) => ({
    env,
    registryPath: join(dir, 'registry.db'),
    keyFilePath: join(dir, 'registry.key'),
    useKeyFile,
    keychainAccount: `registry:${dir}`,
  });

  it('uses HANACTL_REGISTRY_KEY ahead of an opted-in key file', async () => {
    const dir = folder();
    const key = newKey();
    const store = selectKeyStore(base(dir, { HANACTL_REGISTRY_KEY: key.toString('base64') }, true));
    expect(store.source).toBe('env');
    expect(store.description).toContain('HANACTL_REGISTRY_KEY');
    expect((await loadOrCreateKey(store, join(dir, 'registry.db'))).equals(key)).toBe(true);
    expect(existsSync(join(dir, 'registry.key'))).toBe(false);
  });

  it('falls back to the key file when opted in, and to the keychain otherwise', () => {
    const dir = folder();
    expect(selectKeyStore(base(dir, { HANACTL_REGISTRY_KEY: '' }, true)).source).toBe('file');
    expect(selectKeyStore(base(dir, {}, false)).source).toBe('keychain');
  });

  it.each([
    ['not base64 at all', 'not a key!'],
    ['16 bytes', randomBytes(16).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['hex instead of base64', randomBytes(32).toString('hex')],
  ])('refuses a malformed HANACTL_REGISTRY_KEY (%s) with a sentence naming the variable', async (_what, value) => {
    const dir = folder();
    const store = selectKeyStore(base(dir, { HANACTL_REGISTRY_KEY: value }));
    const err = await thrown(() => loadOrCreateKey(store, join(dir, 'registry.db')));
    expect(err.code).toBe('REGISTRY_LOCKED');
    expect(err.message).toMatch(/HANACTL_REGISTRY_KEY must be base64 of exactly 32 bytes/);
    expect(err.message).not.toContain(value);
    expect(existsSync(join(dir, 'registry.db'))).toBe(false);
  });

  it('accepts a well-formed env key with surrounding whitespace', async () => {
    const key = newKey();
    expect((await new EnvKeyStore(`  ${key.toString('base64')}\n`).load()).equals(key)).toBe(true);
  });

  it('creates a key file with mode 0600 on first use and reads the same key back', async () => {
    const dir = folder();
    const store = new FileKeyStore(join(dir, 'registry.key'));
    const key = await loadOrCreateKey(store, join(dir, 'registry.db'));
    expect(key).toHaveLength(32);
    expect(mode(join(dir, 'registry.key'))).toBe(0o600);
    expect(readFileSync(join(dir, 'registry.key'), 'utf8').trim()).toBe(key.toString('base64'));

    const later = await loadOrCreateKey(new FileKeyStore(join(dir, 'registry.key')), join(dir, 'registry.db'));
    expect(later.equals(key)).toBe(true);
    const reg = Registry.open(join(dir, 'registry.db'), later);
    reg.close();
  });

  it('refuses a key file others can read, naming chmod 600', async () => {
    const dir = folder();
    const path = join(dir, 'registry.key');
    writeFileSync(path, `${newKey().toString('base64')}\n`);
    chmodSync(path, 0o644);
    const err = await thrown(() => loadOrCreateKey(new FileKeyStore(path), join(dir, 'registry.db')));
    expect(err.code).toBe('REGISTRY_LOCKED');
    expect(err.message).toContain(`chmod 600 ${path}`);
  });

  it('refuses an existing registry whose key is missing from the store, and does not make a new key', async () => {
    const dir = folder();
    const registryPath = join(dir, 'registry.db');
    const reg = Registry.open(registryPath, newKey());
    reg.put(record('precious', 'postgres://app@db.example/shop', 'pw'), false);
    reg.close();
    const before = sha256(registryPath);

    const keyFile = join(dir, 'registry.key');
    const err = await thrown(() => loadOrCreateKey(new FileKeyStore(keyFile), registryPath));
    expect(err.code).toBe('REGISTRY_LOCKED');
    expect(err.message).toContain(registryPath);
    expect(err.message).toMatch(/will not replace it/);
    expect(existsSync(keyFile)).toBe(false);
    expect(sha256(registryPath)).toBe(before);
  });
});
