import { existsSync } from 'node:fs';
import { HanactlError } from '../../shared/errors.js';
import { Registry } from '../registry/registry.js';
import type { KeySlots } from './key-slots.js';
import { loadOrCreateKey } from './resolve-key.js';

/** What start-up reports about a key it had to sort out. */
export interface RecoveryLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * Opens the registry at start-up, finishing a key change that was interrupted. A rotation or
 * an import stores the new key in the next slot before it touches the registry, and promotes
 * it to the current slot only after the registry reads back with it. So at start:
 *
 * - the registry opens with the current key: any key left in the next slot is stale (the
 *   change stopped before the registry changed, or after the promotion) and is deleted;
 * - it does not, but opens with the next key: the change stopped between the two steps; the
 *   next key is promoted, then deleted from the next slot;
 * - neither: refused as before (REGISTRY_LOCKED), nothing is changed.
 */
export async function openRegistry(slots: KeySlots, path: string, log?: RecoveryLog): Promise<Registry> {
  if (!slots.next) return openWith(await loadOrCreateKey(slots.current, path), path);
  const { current, next } = slots;
  const stored = existsSync(path) ? await current.load() : null;
  if (stored && Registry.opensWith(path, stored)) {
    await dropStale(next);
    return openWith(stored, path);
  }
  const pending = existsSync(path) ? await next.load() : null;
  if (pending && Registry.opensWith(path, pending)) {
    await current.replace(pending);
    const check = await current.load();
    if (!check?.equals(pending)) {
      throw new HanactlError('REGISTRY_LOCKED', `The registry key waiting in ${next.description} could not be moved to ${current.description}; both are left as they are.`);
    }
    await next.remove();
    log?.warn({ from: next.description, to: current.description }, 'finished an interrupted key change: the new registry key was moved into place');
    stored?.fill(0);
    return openWith(pending, path);
  }
  pending?.fill(0);
  if (!existsSync(path)) await dropStale(next);
  return openWith(stored ?? (await loadOrCreateKey(current, path)), path);
}

async function dropStale(next: NonNullable<KeySlots['next']>): Promise<void> {
  const stale = await next.load().catch(() => null);
  if (stale) {
    stale.fill(0);
    await next.remove();
  }
}

function openWith(key: Buffer, path: string): Registry {
  try {
    return Registry.open(path, key);
  } finally {
    key.fill(0);
  }
}
