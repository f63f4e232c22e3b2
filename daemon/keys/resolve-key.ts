import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { HanactlError } from '../../shared/errors.js';
import { EnvKeyStore } from './env-key-store.js';
import { FileKeyStore } from './file-key-store.js';
import { KEY_BYTES, type KeyStore } from './key-store.js';
import { KeychainKeyStore } from './keychain-key-store.js';

export interface KeySelection {
  readonly env: NodeJS.ProcessEnv;
  readonly registryPath: string;
  readonly keyFilePath: string;
  /** The person opted into a key file (config or `--key-file`). */
  readonly useKeyFile: boolean;
  /** Keychain account; one per hanactl home, so homes never share a key. */
  readonly keychainAccount: string;
}

/** Picks the store: the environment variable, else an opted-in key file, else the OS keychain. */
export function selectKeyStore(selection: KeySelection): KeyStore {
  const envKey = selection.env.HANACTL_REGISTRY_KEY;
  if (envKey !== undefined && envKey !== '') return new EnvKeyStore(envKey);
  if (selection.useKeyFile) return new FileKeyStore(selection.keyFilePath);
  return new KeychainKeyStore(selection.keychainAccount);
}

/**
 * Loads the registry key, generating and storing one on first use. A registry that exists
 * while its key does not is refused: generating a new key would orphan it.
 */
export async function loadOrCreateKey(store: KeyStore, registryPath: string): Promise<Buffer> {
  const existing = await store.load();
  if (existing) return existing;
  if (existsSync(registryPath)) {
    throw new HanactlError(
      'REGISTRY_LOCKED',
      `The registry ${registryPath} exists but ${store.description} holds no key for it. Restore the key (or set HANACTL_REGISTRY_KEY to it); hanactl will not replace it, as that would make the registry unreadable.`,
    );
  }
  const key = randomBytes(KEY_BYTES);
  await store.save(key);
  const check = await store.load();
  if (!check?.equals(key)) {
    throw new HanactlError('REGISTRY_LOCKED', `The new registry key could not be read back from ${store.description}; nothing was written.`);
  }
  return key;
}
