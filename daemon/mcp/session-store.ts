import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a session had chosen, kept so it survives a daemon restart. Names and folders only, never a secret. */
export interface SavedSession {
  readonly active: string | null;
  readonly pinned: boolean;
  readonly project?: string;
}

const ID = /^[A-Za-z0-9-]{8,64}$/;

/**
 * One small file per live relay session in the run folder (0700; files 0600): a daemon started
 * after a crash finds the chosen connection of each relay that reconnects with its session id.
 * A session that ends removes its file; files older than `maxAgeMs` are dropped at start.
 */
export class SessionStore {
  readonly #dir: string;
  readonly #written = new Map<string, string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  static isId(id: string): boolean {
    return ID.test(id);
  }

  /** Removes files left by sessions that never came back. */
  prune(maxAgeMs: number): void {
    let names: string[];
    try {
      names = readdirSync(this.#dir);
    } catch {
      return;
    }
    const cutoff = Date.now() - maxAgeMs;
    for (const name of names) {
      const path = join(this.#dir, name);
      try {
        if (statSync(path).mtimeMs < cutoff) rmSync(path, { force: true });
      } catch {
        // gone meanwhile
      }
    }
  }

  load(id: string): SavedSession | undefined {
    if (!ID.test(id)) return undefined;
    try {
      const saved = JSON.parse(readFileSync(join(this.#dir, `${id}.json`), 'utf8')) as Partial<SavedSession>;
      if (typeof saved.pinned !== 'boolean' || !(saved.active === null || typeof saved.active === 'string')) return undefined;
      return { active: saved.active, pinned: saved.pinned, ...(typeof saved.project === 'string' ? { project: saved.project } : {}) };
    } catch {
      return undefined;
    }
  }

  /** Writes the session's state when it changed (atomically: a crash leaves the old file or the new). */
  save(id: string, state: SavedSession): void {
    if (!ID.test(id)) return;
    const text = JSON.stringify(state);
    if (this.#written.get(id) === text) return;
    try {
      mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      const path = join(this.#dir, `${id}.json`);
      writeFileSync(`${path}.tmp`, text, { mode: 0o600 });
      renameSync(`${path}.tmp`, path);
      this.#written.set(id, text);
    } catch {
      // best effort: the session works on, it only would not survive a restart
    }
  }

  forget(id: string): void {
    this.#written.delete(id);
    if (ID.test(id)) rmSync(join(this.#dir, `${id}.json`), { force: true });
  }
}
