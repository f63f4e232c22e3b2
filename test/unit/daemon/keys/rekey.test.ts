import { randomBytes } from 'node:crypto';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRecord } from '../../../../daemon/registry/connection-record.js';
import { Registry } from '../../../../daemon/registry/registry.js';
import { parseConnectionUrl } from '../../../../shared/connection-url.js';
import { tempFolders } from '../../../helpers/temp-dir.js';

const require = createRequire(import.meta.url);
const { folder } = tempFolders('hanactl-rekey-');

const record = (name: string, password: string) =>
  makeRecord(
    {
      name,
      target: parseConnectionUrl('postgres://app@db.example/shop').target,
      allowWrite: false,
      context: [],
      createdAt: '2025-01-01T00:00:00.000Z',
    },
    password,
  );

function journalMode(path: string, key: Buffer): string {
  const Database = require('better-sqlite3-multiple-ciphers') as new (
    p: string,
  ) => { pragma(s: string, o?: { simple: boolean }): unknown; close(): void };
  const db = new Database(path);
  try {
    db.pragma(`cipher='sqlcipher'`);
    db.pragma('legacy=4');
    db.pragma(`key="x'${key.toString('hex')}'"`);
    return String(db.pragma('journal_mode', { simple: true }));
  } finally {
    db.close();
  }
}

describe('Registry.rekey', () => {
  it('re-encrypts a WAL-mode registry under a new key: the new key opens it, the old does not, data intact', () => {
    const path = join(folder(), 'registry.db');
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const reg = Registry.open(path, oldKey);
    reg.put(record('shop', 'pw-1'), false);
    reg.rekey(newKey);
    // Still usable, and back in WAL mode, after the rekey.
    reg.put(record('more', 'pw-2'), false);
    expect(reg.list().map((r) => r.name)).toEqual(['more', 'shop']);
    reg.close();

    expect(Registry.opensWith(path, oldKey)).toBe(false);
    expect(Registry.opensWith(path, newKey, true)).toBe(true);
    expect(journalMode(path, newKey)).toBe('wal');
    const again = Registry.open(path, newKey);
    expect(again.get('shop')?.password).toBe('pw-1');
    expect(again.get('more')?.password).toBe('pw-2');
    again.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('snapshot() returns the whole encrypted file with the WAL folded in', () => {
    const dir = folder();
    const path = join(dir, 'registry.db');
    const key = randomBytes(32);
    const reg = Registry.open(path, key);
    reg.put(record('shop', 'pw-snap'), false);
    const bytes = reg.snapshot();
    reg.close();
    expect(bytes.includes(Buffer.from('pw-snap'))).toBe(false);
    const copy = join(dir, 'copy.db');
    writeFileSync(copy, bytes);
    const reopened = Registry.open(copy, key);
    expect(reopened.get('shop')?.password).toBe('pw-snap');
    reopened.close();
  });

  it('opensWith is false for a missing file and creates none', () => {
    const dir = folder();
    expect(Registry.opensWith(join(dir, 'none.db'), randomBytes(32))).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });
});
