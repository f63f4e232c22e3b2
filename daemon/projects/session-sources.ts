import type { HanaCliEnv } from '../../shared/hana-cli-env.js';

/** What a shim adds to its project's chain: a named connection file, its `VCAP_SERVICES` and `HANA_CLI_*` target. */
export interface SessionExtras {
  readonly connFile?: string;
  readonly vcapServices?: string;
  readonly hanaCli?: HanaCliEnv;
}

interface Entry {
  readonly extras: SessionExtras;
  seenAt: number;
}

/**
 * The extras each shim announced with `detect` (kept in daemon memory only, never listed or
 * logged: `VCAP_SERVICES` may hold passwords), so its later listings and queries resolve the
 * same chain. An entry goes when its session ends; entries idle for a day (a session whose end
 * was never seen) are dropped, and the table is capped.
 */
export class SessionSources {
  readonly #entries = new Map<string, Entry>();
  readonly #idleMs: number;
  readonly #max: number;

  constructor(options: { idleMs?: number; max?: number } = {}) {
    this.#idleMs = options.idleMs ?? 24 * 60 * 60_000;
    this.#max = options.max ?? 1000;
  }

  set(session: string, extras: SessionExtras): void {
    this.#entries.delete(session);
    this.#entries.set(session, { extras: { ...extras }, seenAt: Date.now() });
    this.#prune();
  }

  /** The session ended: its extras go with it (they may hold a `VCAP_SERVICES` of up to 1 MB). */
  forget(session: string): void {
    this.#entries.delete(session);
  }

  /** How many sessions' extras are held. */
  get size(): number {
    return this.#entries.size;
  }

  get(session: string | undefined): SessionExtras {
    if (!session) return {};
    const entry = this.#entries.get(session);
    if (!entry) return {};
    entry.seenAt = Date.now();
    return entry.extras;
  }

  #prune(): void {
    const cutoff = Date.now() - this.#idleMs;
    for (const [id, entry] of this.#entries) if (entry.seenAt < cutoff) this.#entries.delete(id);
    while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}
