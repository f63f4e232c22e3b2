import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { HanactlError } from '../../../shared/errors.js';

/** Where the compiled host sits when this module runs from `dist/` (the daemon). */
const SIBLING = new URL('./sqlite-host.js', import.meta.url);

/**
 * Where the compiled host sits when this module runs from the TypeScript sources (vitest):
 * the `.ts` host cannot be forked by plain Node, so the build output is used. `npm test`
 * builds first (`pretest`).
 */
const BUILT = new URL('../../../dist/daemon/engines/sqlite/sqlite-host.js', import.meta.url);

let cached: string | undefined;

/**
 * The file `child_process.fork` starts for a SQLite connection: the `sqlite-host.js` next to
 * this module, else the one in the repository's `dist/`. Throws DRIVER_UNAVAILABLE when
 * neither exists (the project was not built).
 */
export function sqliteHostPath(): string {
  if (cached) return cached;
  for (const url of [SIBLING, BUILT]) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return (cached = path);
  }
  throw new HanactlError(
    'DRIVER_UNAVAILABLE',
    `The SQLite worker ${fileURLToPath(SIBLING)} is missing (nor is it in dist/); run \`npm run build\` to compile it.`,
  );
}
