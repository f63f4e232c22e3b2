import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { realFolder } from './trust-store.js';

/** Files that mark a project's root folder (hana-cli and CAP look for these). */
export const ROOT_MARKERS = ['package.json', 'mta.yaml', '.cdsrc.json', '.cdsrc-private.json', 'default-env.json'] as const;

/** CAP's conventional folders. */
const CAP_FOLDERS = ['db', 'srv', 'app'] as const;

/** Where a path's project is: the path as given, its root (a real path), and what marks it. */
export interface ProjectRoot {
  readonly path: string;
  readonly root: string;
  readonly markers: readonly string[];
  /** CAP folders found in the root (`db/`, `srv/`, `app/`). */
  readonly capFolders: readonly string[];
}

function kindOf(path: string): 'file' | 'dir' | undefined {
  try {
    const st = statSync(path);
    return st.isDirectory() ? 'dir' : st.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds the project root of `path` (absolute; a file means its folder): its real path, then up
 * to the first folder holding a root marker, never above `stopAt` (the trusted folder holding
 * the path, when there is one). Without a marker the folder itself is the root. Only the
 * existence of marker files and CAP folders is checked here; nothing is read. A missing path
 * or a symlink loop is a HanactlError that names the path.
 */
export function findProjectRoot(path: string, stopAt?: (real: string) => string | undefined): ProjectRoot {
  let start = realFolder(path);
  if (kindOf(start) === 'file') start = dirname(start);
  const boundary = stopAt?.(start);
  let root = start;
  let markers: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    const found = ROOT_MARKERS.filter((m) => kindOf(join(dir, m)) === 'file');
    if (found.length > 0) {
      root = dir;
      markers = found;
      break;
    }
    if (dir === boundary || dir === dirname(dir)) break;
  }
  const capFolders = CAP_FOLDERS.filter((f) => kindOf(join(root, f)) === 'dir').map((f) => `${f}/`);
  return { path, root, markers, capFolders };
}
