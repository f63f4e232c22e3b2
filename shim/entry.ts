import { setInstallRoot } from '../shared/install-root.js';
import { parseShimArgs } from './args.js';
import { runShim } from './main.js';

// The bundled shim's entry (dist/shim.cjs): the fast path editors start. It exports nothing.

function start(root: string): void {
  setInstallRoot(root);
  runShim(parseShimArgs(process.argv.slice(2))).catch((err: unknown) => {
    process.stderr.write(`hanactl mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}

declare const HANACTL_BUNDLE: boolean | undefined;

// Only the bundle runs this: __dirname there is dist/, whose parent is the install folder.
if (typeof HANACTL_BUNDLE !== 'undefined' && HANACTL_BUNDLE) {
  const root = `${__dirname}/..`;
  start(root);
}
