import type { Paths } from '../../shared/paths.js';
import { FileKeyStore } from './file-key-store.js';
import type { KeyStore, WritableKeyStore } from './key-store.js';
import { KeychainKeyStore } from './keychain-key-store.js';
import { selectKeyStore } from './resolve-key.js';

/**
 * The key store in use and, when hanactl may write it, a second "next" slot in the same store
 * where a new key waits while the registry is re-encrypted (rotation, import). The environment
 * variable has no next slot: the person owns that key.
 */
export type KeySlots =
  | { readonly current: WritableKeyStore; readonly next: WritableKeyStore }
  | { readonly current: KeyStore; readonly next: undefined };

/** The keychain account of a home's registry key (one per home, so homes never share a key). */
export function keychainAccount(paths: Paths): string {
  return `registry:${paths.home}`;
}

/**
 * The next slot's keychain account: `registry-next:<home>`. The suffix goes on the prefix,
 * not the end, so it can never equal the account of another home (a home named `<home>-next`).
 */
export function nextKeychainAccount(paths: Paths): string {
  return `registry-next:${paths.home}`;
}

/** The next slot's key file: `registry.key-next` beside `registry.key`. */
export function nextKeyFile(paths: Paths): string {
  return `${paths.keyFile}-next`;
}

/** True for the stores hanactl may write (keychain, key file). */
export function isWritable(store: KeyStore): store is WritableKeyStore {
  return typeof (store as Partial<WritableKeyStore>).replace === 'function' && typeof (store as Partial<WritableKeyStore>).remove === 'function';
}

/** The key store the daemon uses for these paths and this environment, and its next slot. */
export function keySlots(paths: Paths, env: NodeJS.ProcessEnv, useKeyFile: boolean): KeySlots {
  const current = selectKeyStore({
    env,
    registryPath: paths.registry,
    keyFilePath: paths.keyFile,
    useKeyFile,
    keychainAccount: keychainAccount(paths),
  });
  if (!isWritable(current)) return { current, next: undefined };
  const next = current.source === 'file' ? new FileKeyStore(nextKeyFile(paths)) : new KeychainKeyStore(nextKeychainAccount(paths));
  return { current, next };
}
