import { HanactlError } from '../../shared/errors.js';
import { KEY_BYTES, type KeyStore } from './key-store.js';

/** `HANACTL_REGISTRY_KEY`: base64 of 32 bytes, for machines without a keychain. */
export class EnvKeyStore implements KeyStore {
  readonly source = 'env' as const;
  readonly description = 'the HANACTL_REGISTRY_KEY environment variable';
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  async load(): Promise<Buffer> {
    const key = Buffer.from(this.#value.trim(), 'base64');
    if (key.length !== KEY_BYTES || key.toString('base64') !== this.#value.trim()) {
      throw new HanactlError(
        'REGISTRY_LOCKED',
        `HANACTL_REGISTRY_KEY must be base64 of exactly 32 bytes (it decodes to ${key.length}); make one with \`openssl rand -base64 32\`.`,
      );
    }
    return key;
  }

  async save(): Promise<void> {
    // The person owns this key; nothing to store.
  }
}
