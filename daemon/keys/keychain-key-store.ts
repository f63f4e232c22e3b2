import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import { KEY_BYTES, type WritableKeyStore } from './key-store.js';

/** The slice of @napi-rs/keyring's AsyncEntry the store uses. */
interface AsyncEntryLike {
  getPassword(): Promise<string | null>;
  setPassword(password: string): Promise<void>;
  deletePassword(): Promise<boolean>;
}

type AsyncEntryConstructor = new (
  service: string,
  account: string,
  options?: { linux?: { store?: 'secret-service' | 'keyutils' } },
) => AsyncEntryLike;

export const KEYCHAIN_SERVICE = 'hanactl';

/**
 * The OS keychain through @napi-rs/keyring. On Linux the Secret Service store is forced:
 * the library's default falls back to the kernel keyring, which is lost at reboot and
 * would leave the registry unreadable.
 */
export class KeychainKeyStore implements WritableKeyStore {
  readonly source = 'keychain' as const;
  readonly description: string;
  readonly #account: string;
  #entry: AsyncEntryLike | undefined;

  constructor(account: string) {
    this.#account = account;
    this.description = `OS keychain (service "${KEYCHAIN_SERVICE}", account "${account}")`;
  }

  async #open(): Promise<AsyncEntryLike> {
    if (this.#entry) return this.#entry;
    const { AsyncEntry } = (await import('@napi-rs/keyring')) as unknown as { AsyncEntry: AsyncEntryConstructor };
    this.#entry = new AsyncEntry(KEYCHAIN_SERVICE, this.#account, { linux: { store: 'secret-service' } });
    return this.#entry;
  }

  async load(): Promise<Buffer | null> {
    try {
      const entry = await this.#open();
      const value = await entry.getPassword();
      if (value === null) return null;
      const key = Buffer.from(value, 'base64');
      if (key.length !== KEY_BYTES) throw new HanactlError('REGISTRY_LOCKED', 'The key stored in the OS keychain is not 32 bytes; it was changed outside hanactl.');
      return key;
    } catch (err) {
      if (err instanceof HanactlError) throw err;
      throw unreachable(err);
    }
  }

  async save(key: Buffer): Promise<void> {
    try {
      const entry = await this.#open();
      await entry.setPassword(key.toString('base64'));
    } catch (err) {
      throw unreachable(err);
    }
  }

  /** The keychain's set replaces an existing entry. */
  replace(key: Buffer): Promise<void> {
    return this.save(key);
  }

  async remove(): Promise<void> {
    try {
      await (await this.#open()).deletePassword();
    } catch (err) {
      // "No matching entry" is what we wanted; anything else means the keychain is out of reach.
      if (/no (matching )?entry|not found/i.test(err instanceof Error ? err.message : String(err))) return;
      throw unreachable(err);
    }
  }
}

function unreachable(err: unknown): HanactlError {
  const reason = err instanceof Error ? err.message : String(err);
  return new HanactlError(
    'REGISTRY_LOCKED',
    `No OS keychain is reachable (${reason.split('\n')[0]}). On a headless machine either set HANACTL_REGISTRY_KEY to base64 of 32 random bytes (for example \`export HANACTL_REGISTRY_KEY=$(openssl rand -base64 32)\`), or opt into a 0600 key file beside the registry with \`${cliCommand()} daemon start --key-file\` (weaker: anyone who can read your files can read the key).`,
  );
}
