import type { KeySource } from '../../shared/schemas.js';

/** Where the registry's 256-bit key is kept. */
export interface KeyStore {
  readonly source: KeySource;
  /** A sentence for `daemon status`: where exactly the key lives. */
  readonly description: string;
  /** The stored key, or null when none exists yet. Throws when the store cannot be reached. */
  load(): Promise<Buffer | null>;
  /** Stores a newly generated key. */
  save(key: Buffer): Promise<void>;
}

/**
 * A store whose key hanactl may change (key rotation, import): the keychain and the key file.
 * The environment variable is not one: the person owns it.
 */
export interface WritableKeyStore extends KeyStore {
  /** Stores the key, replacing any key stored before. */
  replace(key: Buffer): Promise<void>;
  /** Deletes the stored key; no error when there is none. */
  remove(): Promise<void>;
}

export const KEY_BYTES = 32;
