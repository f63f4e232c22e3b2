import type { ShimMainOptions } from './main.js';

/**
 * The options of `hanactl mcp` for the bundled shim, which starts without the full CLI: the
 * same ones the CLI accepts (`--connection`, `--project`, `--conn-file`). Exits 2 on anything else.
 */
export function parseShimArgs(argv: readonly string[]): ShimMainOptions {
  const args = argv[0] === 'mcp' ? argv.slice(1) : [...argv];
  const options: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const eq = arg.indexOf('=');
    const [flag, inline] = eq > 0 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
    const key = { '--connection': 'connection', '--project': 'project', '--conn-file': 'connFile' }[flag];
    const value = inline ?? args[++i];
    if (!key || value === undefined) {
      process.stderr.write(`hanactl mcp: unknown or incomplete option "${arg}"; use --connection NAME, --project DIR, --conn-file FILE.\n`);
      process.exit(2);
    }
    options[key] = value;
  }
  return options as ShimMainOptions;
}
