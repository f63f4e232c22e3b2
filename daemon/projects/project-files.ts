import { closeSync, constants, fstatSync, openSync, readSync, realpathSync, type Stats, statSync } from 'node:fs';
import type { TrustStore } from './trust-store.js';

/** What looking for a file inside trust found. Messages name the file, never its contents. */
export type FileProbe =
  | { readonly kind: 'absent' }
  | { readonly kind: 'outside'; readonly real: string; readonly message: string }
  | { readonly kind: 'error'; readonly message: string }
  | { readonly kind: 'file'; readonly real: string; readonly stamp: string };

/** A file read inside trust: its text (cached until the file changes). */
export type FileRead =
  | Exclude<FileProbe, { kind: 'file' }>
  | { readonly kind: 'file'; readonly real: string; readonly text: string; readonly stamp: string };

/** Connection files are small; anything larger is not one (and is not read into memory). */
export const MAX_PROJECT_FILE_BYTES = 1024 * 1024;
const MAX_CACHED = 512;

const stampOf = (st: Stats): string => `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;

/**
 * Reads project files for the daemon, only inside trusted folders: the real path of every
 * file (after `..` and symlinks) must lie inside a trusted real path. Reads are cached per
 * real path with the file's modification stamp and repeated when the file changes. Special
 * files (FIFOs, devices) and files over 1 MiB are refused without being opened for reading.
 */
export class ProjectFiles {
  readonly #trust: Pick<TrustStore, 'containing'>;
  readonly #cache = new Map<string, { stamp: string; text: string }>();
  #reads = 0;
  #hits = 0;

  constructor(trust: Pick<TrustStore, 'containing'>) {
    this.#trust = trust;
  }

  /** Files read from disk, and reads answered from the cache (for tests and status). */
  get counts(): { reads: number; hits: number } {
    return { reads: this.#reads, hits: this.#hits };
  }

  /** Where `path` really is, and whether it may be read. `label` names it in messages. */
  probe(path: string, label: string): FileProbe {
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'absent' };
      if (code === 'ELOOP') return { kind: 'error', message: `${label} (${path}) is part of a symlink loop; it was not read.` };
      if (code === 'EACCES') return { kind: 'error', message: `${label} (${path}) cannot be read: permission denied.` };
      return { kind: 'error', message: `${label} (${path}) cannot be opened (${code ?? 'unknown error'}).` };
    }
    if (!this.#trust.containing(real)) {
      return { kind: 'outside', real, message: `${label} resolves to ${real}, outside every trusted folder; it was not read.` };
    }
    let st: Stats;
    try {
      st = statSync(real);
    } catch (err) {
      return { kind: 'error', message: `${label} (${path}) cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'}).` };
    }
    if (!st.isFile()) return { kind: 'error', message: `${label} (${real}) is not a regular file; it was not read.` };
    if (st.size > MAX_PROJECT_FILE_BYTES) {
      return {
        kind: 'error',
        message: `${label} (${real}) is ${st.size} bytes, larger than a connection file can be (1 MiB); it was not read.`,
      };
    }
    return { kind: 'file', real, stamp: stampOf(st) };
  }

  /** Reads a file inside trust as UTF-8 text, from the cache while its stamp is unchanged. */
  read(path: string, label: string): FileRead {
    const probe = this.probe(path, label);
    if (probe.kind !== 'file') return probe;
    const cached = this.#cache.get(probe.real);
    if (cached && cached.stamp === probe.stamp) {
      this.#hits++;
      return { ...probe, text: cached.text };
    }
    this.#reads++;
    let fd: number | undefined;
    try {
      // O_NOFOLLOW: the last component cannot have become a link since the probe.
      fd = openSync(probe.real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const st = fstatSync(fd);
      if (!st.isFile() || st.size > MAX_PROJECT_FILE_BYTES)
        return { kind: 'error', message: `${label} (${probe.real}) changed while it was read; try again.` };
      const buffer = Buffer.alloc(st.size);
      let offset = 0;
      while (offset < st.size) {
        const n = readSync(fd, buffer, offset, st.size - offset, offset);
        if (n === 0) break;
        offset += n;
      }
      const text = buffer
        .subarray(0, offset)
        .toString('utf8')
        .replace(/^\uFEFF/, '');
      const stamp = stampOf(st);
      this.#remember(probe.real, stamp, text);
      return { kind: 'file', real: probe.real, stamp, text };
    } catch (err) {
      return {
        kind: 'error',
        message: `${label} (${probe.real}) cannot be read (${(err as NodeJS.ErrnoException).code ?? 'unknown error'}).`,
      };
    } finally {
      if (fd !== undefined) closeSync(fd);
    }
  }

  #remember(real: string, stamp: string, text: string): void {
    this.#cache.delete(real);
    this.#cache.set(real, { stamp, text });
    if (this.#cache.size > MAX_CACHED) this.#cache.delete(this.#cache.keys().next().value as string);
  }
}
