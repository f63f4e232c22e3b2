import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The part of a better-sqlite3 database that keying needs. */
export interface KeyableDatabase {
  pragma(sql: string, options?: { simple?: boolean }): unknown;
}

interface ProbeDatabase extends KeyableDatabase {
  prepare(sql: string): { get(): unknown };
  close(): void;
}

/** SQLCipher 4's format with a raw 256-bit key (no passphrase derivation: the key already is random). */
function useSqlCipher(db: KeyableDatabase): void {
  db.pragma(`cipher='sqlcipher'`);
  db.pragma('legacy=4');
}

/** Keys a SQLite3 Multiple Ciphers connection. Must run before the first read. */
export function unlockCipher(db: KeyableDatabase, key: Buffer): void {
  useSqlCipher(db);
  db.pragma(`key="x'${key.toString('hex')}'"`);
}

/**
 * Re-encrypts an open database under `key` in one transaction: a plain one is encrypted, a
 * keyed one takes the new key. The journal must not be WAL.
 */
export function rekeyCipher(db: KeyableDatabase, key: Buffer): void {
  useSqlCipher(db);
  db.pragma(`rekey="x'${key.toString('hex')}'"`);
}

/**
 * True when the file at `path` opens, through a connection of its own, with `key` (or, with
 * none, as a plain SQLite file). `thorough` reads every page (`PRAGMA quick_check`), not just
 * the first.
 */
export function opensWith(path: string, key: Buffer | undefined, thorough = false): boolean {
  const Database = require('better-sqlite3-multiple-ciphers') as new (path: string, options: { fileMustExist: boolean }) => ProbeDatabase;
  let db: ProbeDatabase | undefined;
  try {
    db = new Database(path, { fileMustExist: true });
    if (key) unlockCipher(db, key);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return thorough ? db.pragma('quick_check', { simple: true }) === 'ok' : true;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}
