import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * A temp folder for one test file (`<tmpdir>/<prefix>XXXXXX`), removed after all its tests; call at
 * the top of the file. Each `folder()` is a fresh, empty `case-<n>` folder inside it, one per case.
 */
export function tempFolders(prefix: string): { readonly root: string; folder(): string } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  let n = 0;
  const folder = () => {
    const dir = join(root, `case-${++n}`);
    mkdirSync(dir);
    return dir;
  };
  return { root, folder };
}
