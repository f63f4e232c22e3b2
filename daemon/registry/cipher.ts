/** The part of a better-sqlite3 database that keying needs. */
export interface KeyableDatabase {
  pragma(sql: string, options?: { simple?: boolean }): unknown;
}

/**
 * Keys a SQLite3 Multiple Ciphers connection: SQLCipher 4's format, a raw 256-bit key (no
 * passphrase derivation: the key already is random). Must run before the first read.
 */
export function unlockCipher(db: KeyableDatabase, key: Buffer): void {
  db.pragma(`cipher='sqlcipher'`);
  db.pragma('legacy=4');
  db.pragma(`key="x'${key.toString('hex')}'"`);
}

/** Encrypts an open, unencrypted database in place under `key` (the journal must not be WAL). */
export function encryptInPlace(db: KeyableDatabase, key: Buffer): void {
  db.pragma(`cipher='sqlcipher'`);
  db.pragma('legacy=4');
  db.pragma(`rekey="x'${key.toString('hex')}'"`);
}
