import { randomBytes } from 'node:crypto';
import { HanactlError } from '../../shared/errors.js';
import type { ExportDocument, RotateKeyResult } from '../../shared/key-schemas.js';
import { Registry } from '../registry/registry.js';
import { sealExport } from './export-format.js';
import type { KeySlots } from './key-slots.js';
import { KEY_BYTES } from './key-store.js';

export interface KeyServiceDeps {
  readonly slots: KeySlots;
  /** The open registry (the daemon's only connection to it). */
  readonly registry: Pick<Registry, 'rekey' | 'snapshot'>;
  readonly registryPath: string;
  readonly hanactlVersion: string;
  readonly log?: { info(fields: Record<string, unknown>, message: string): void; error(fields: Record<string, unknown>, message: string): void };
}

/**
 * Changes and exports the registry key; the daemon does it because it holds the registry.
 *
 * Rotation, for the keychain and the key file, in an order where an interruption loses nothing:
 * 1. a new key is stored in the next slot (`registry-next:<home>`, `registry.key-next`) and read back;
 * 2. the registry is rekeyed and a fresh connection reads every page with the new key;
 * 3. the new key replaces the current one and is read back;
 * 4. the next slot is emptied.
 * Stopped before 2, the old key still opens the registry; stopped between 2 and 3, the next
 * start finds the registry opens with the next key and promotes it (`openRegistry`).
 */
export class KeyService {
  readonly #deps: KeyServiceDeps;
  #busy = false;

  constructor(deps: KeyServiceDeps) {
    this.#deps = deps;
  }

  get source() {
    return this.#deps.slots.current.source;
  }

  async rotate(options: { printNewKey?: boolean } = {}): Promise<RotateKeyResult> {
    const { slots } = this.#deps;
    if (!slots.next && !options.printNewKey) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `The registry key comes from ${slots.current.description}, which hanactl cannot change. Rotating prints the new key once: give --print-new-key, store the key where you keep HANACTL_REGISTRY_KEY, and restart the daemon with it. If the key is lost, the registry cannot be read again.`,
      );
    }
    return this.#exclusive(async () => {
      const key = randomBytes(KEY_BYTES);
      try {
        if (slots.next) {
          await slots.next.replace(key);
          if (!(await slots.next.load())?.equals(key)) {
            await slots.next.remove();
            throw new HanactlError('REGISTRY_LOCKED', `The new key could not be read back from ${slots.next.description}; the registry was not changed.`);
          }
        }
        try {
          this.#deps.registry.rekey(key);
        } catch (err) {
          // A rekey that failed leaves the old key in force; a rekey that did not verify leaves the next key for start-up to sort out.
          if (slots.next && Registry.opensWith(this.#deps.registryPath, (await slots.current.load()) ?? Buffer.alloc(0))) await slots.next.remove();
          throw err;
        }
        if (slots.next) {
          try {
            await slots.current.replace(key);
            if (!(await slots.current.load())?.equals(key)) throw new Error('the stored key did not read back');
          } catch (err) {
            this.#deps.log?.error({ err: (err as Error).message }, 'registry rekeyed; the new key waits in the next slot');
            throw new HanactlError(
              'REGISTRY_LOCKED',
              `The registry was re-encrypted, but the new key could not be stored in ${slots.current.description} (${(err as Error).message}). It is kept in ${slots.next.description}; the daemon moves it into place at its next start.`,
            );
          }
          await slots.next.remove();
        }
        this.#deps.log?.info({ keySource: slots.current.source }, 'registry key rotated');
        return {
          keySource: slots.current.source,
          rotatedAt: new Date().toISOString(),
          ...(options.printNewKey ? { newKey: key.toString('base64') } : {}),
        };
      } finally {
        key.fill(0);
      }
    });
  }

  /** The registry's bytes and its key wrapped by the passphrase; the key itself never leaves the daemon. */
  async exportRegistry(passphrase: string): Promise<ExportDocument> {
    return this.#exclusive(async () => {
      const { slots, registryPath } = this.#deps;
      const key = await slots.current.load();
      if (!key) throw new HanactlError('REGISTRY_LOCKED', `${slots.current.description} holds no registry key.`);
      try {
        const registryBytes = this.#deps.registry.snapshot();
        if (!Registry.opensWith(registryPath, key)) {
          throw new HanactlError(
            'REGISTRY_LOCKED',
            `The key in ${slots.current.description} does not open the registry (was it rotated with --print-new-key?). Restart the daemon with the current key, then export.`,
          );
        }
        return await sealExport({ registryKey: key, registryBytes, passphrase, hanactlVersion: this.#deps.hanactlVersion });
      } finally {
        key.fill(0);
      }
    });
  }

  async #exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.#busy) throw new HanactlError('INVALID_REQUEST', 'Another key rotation or export is running; try again when it has finished.');
    this.#busy = true;
    try {
      return await work();
    } finally {
      this.#busy = false;
    }
  }
}
