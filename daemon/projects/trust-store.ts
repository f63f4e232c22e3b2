import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { HanactlError } from '../../shared/errors.js';
import type { TrustChange, TrustedFolder } from '../../shared/project-schemas.js';

/** Where trusted folders are kept: the encrypted registry's `trusted_folders` table. */
export interface TrustTable {
  listTrusted(): TrustedFolder[];
  addTrusted(path: string, createdAt: string): boolean;
  removeTrusted(path: string): boolean;
}

/** True when `real` is `folder` or lies below it (both real paths). */
export function isInside(real: string, folder: string): boolean {
  if (real === folder) return true;
  return real.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

/** The real path of `path`, or a HanactlError that names the path and the problem. */
export function realFolder(path: string, what = 'folder'): string {
  if (!isAbsolute(path)) throw new HanactlError('INVALID_REQUEST', `The ${what} "${path}" is not an absolute path; give the full path.`);
  try {
    return realpathSync.native(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new HanactlError('NOT_FOUND', `The ${what} ${path} does not exist.`);
    if (code === 'ELOOP') throw new HanactlError('INVALID_REQUEST', `The ${what} ${path} is part of a symlink loop; nothing was read.`);
    if (code === 'EACCES') throw new HanactlError('FORBIDDEN', `The ${what} ${path} cannot be opened (permission denied).`);
    throw new HanactlError('INVALID_REQUEST', `The ${what} ${path} cannot be resolved (${code ?? 'unknown error'}).`);
  }
}

/**
 * The folders a person trusted with `hanactl trust <dir>`, as direnv's `allow`: the daemon
 * reads connection files only inside them. Stored by real path, so a later `..` or symlink
 * cannot point a trusted name somewhere else. Only the CLI's routes change it.
 */
export class TrustStore {
  readonly #table: TrustTable;
  #cache: readonly TrustedFolder[] | undefined;

  constructor(table: TrustTable) {
    this.#table = table;
  }

  list(): TrustedFolder[] {
    this.#cache ??= this.#table.listTrusted();
    return [...this.#cache];
  }

  /** Trusts a folder (a file's folder when given a file); the filesystem root is refused. */
  trust(path: string): TrustChange {
    let real = realFolder(path);
    if (!statSync(real).isDirectory()) real = dirname(real);
    if (real === dirname(real)) {
      throw new HanactlError(
        'INVALID_REQUEST',
        `Trusting ${real} would trust every folder on this machine; trust the project folder instead.`,
      );
    }
    const changed = this.#table.addTrusted(real, new Date().toISOString());
    this.#cache = undefined;
    return { path: real, changed };
  }

  /** Forgets a folder, by its real path or (when it no longer exists) as written. */
  untrust(path: string): TrustChange {
    if (!isAbsolute(path)) throw new HanactlError('INVALID_REQUEST', `The folder "${path}" is not an absolute path; give the full path.`);
    let real = resolve(path);
    try {
      real = realpathSync.native(path);
    } catch {
      // Gone or unreadable: match it as written.
    }
    const changed = this.#table.removeTrusted(real) || (real !== resolve(path) && this.#table.removeTrusted(resolve(path)));
    this.#cache = undefined;
    return { path: real, changed };
  }

  /** The trusted folder that holds `real` (a real path), innermost first, or undefined. */
  containing(real: string): string | undefined {
    let best: string | undefined;
    for (const { path } of this.list()) {
      if (isInside(real, path) && (!best || path.length > best.length)) best = path;
    }
    return best;
  }
}
