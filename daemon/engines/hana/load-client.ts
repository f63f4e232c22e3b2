import { cliCommand } from '../../../shared/cli-command.js';
import { HanactlError } from '../../../shared/errors.js';
import { installRoot } from '../../../shared/install-root.js';
import type { HanaClientModule } from './hana-client-types.js';

/** Loads the client module; injected so tests can simulate a missing package. */
export type HanaClientLoader = () => Promise<unknown>;

const PACKAGE = '@sap/hana-client';

/** The real loader: a dynamic import of a non-literal specifier keeps the package optional. */
export const importHanaClient: HanaClientLoader = () => {
  const specifier: string = PACKAGE;
  return import(specifier);
};

/**
 * Loads `@sap/hana-client` on first use. A missing package or a native binary that does not
 * load becomes DRIVER_UNAVAILABLE with the command that fixes it.
 */
export async function loadHanaClient(loader: HanaClientLoader = importHanaClient): Promise<HanaClientModule> {
  let loaded: unknown;
  try {
    loaded = await loader();
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw unavailable(`it could not be loaded (${reason})`);
  }
  // A CommonJS package imported from ESM arrives as `{ default: module.exports }`.
  const mod = (loaded as { default?: unknown } | null)?.default ?? loaded;
  if (typeof (mod as Partial<HanaClientModule> | null)?.createConnection !== 'function') {
    throw unavailable('the installed package has no createConnection()');
  }
  return mod as HanaClientModule;
}

function unavailable(why: string): HanactlError {
  return new HanactlError(
    'DRIVER_UNAVAILABLE',
    `The SAP HANA driver ${PACKAGE} is not usable: ${why}. Install it with "npm install ${PACKAGE}" in ${installRoot()} ` +
      `(it ships prebuilt binaries for Linux x64/arm64, macOS and Windows x64), then restart the daemon with "${cliCommand()} daemon stop".`,
  );
}
