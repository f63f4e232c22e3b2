import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/**
 * The folder hanactl is installed in (holding package.json, bin/ and dist/). Compiled modules
 * find it from their own URL (dist/shared/*.js); the bundled shim, whose modules have no URL,
 * tells it once at start with `setInstallRoot`.
 */
export function installRoot(): string {
  if (root) return root;
  const url = import.meta.url as string | undefined;
  if (!url) throw new Error('hanactl: the install folder is unknown; the bundled entry must call setInstallRoot().');
  // dist/shared/ when compiled, shared/ when run from source (tests): the first folder up with bin/hanactl.js.
  let dir = dirname(fileURLToPath(url));
  for (let i = 0; i < 3 && !existsSync(join(dir, 'bin', 'hanactl.js')); i++) dir = dirname(dir);
  root = dir;
  return root;
}

/** Used by the bundled shim entry (dist/shim.cjs), which knows where it lies. */
export function setInstallRoot(path: string): void {
  root = path;
}
