import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import type { ExportDocument } from '../../shared/key-schemas.js';
import type { Paths } from '../../shared/paths.js';
import type { KeySource } from '../../shared/schemas.js';
import { acquireDaemonLock } from '../lifecycle/daemon-lock.js';
import { ensurePrivateDir } from '../lifecycle/run-dir.js';
import { Registry } from '../registry/registry.js';
import { openExport } from './export-format.js';
import { keySlots } from './key-slots.js';

export interface ImportOptions {
  readonly paths: Paths;
  readonly env: NodeJS.ProcessEnv;
  readonly useKeyFile: boolean;
  readonly doc: ExportDocument;
  readonly passphrase: string;
  /** Replace an existing registry (its connections are lost). */
  readonly force?: boolean;
  /** With HANACTL_REGISTRY_KEY as the key source: return the imported key to be printed. */
  readonly printNewKey?: boolean;
}

export interface ImportResult {
  readonly keySource: KeySource;
  readonly keyDescription: string;
  readonly replaced: boolean;
  /** Base64 of the imported key, when the person must store it (HANACTL_REGISTRY_KEY). */
  readonly newKey?: string;
}

/**
 * Installs an exported registry in this home, run by the CLI with no daemon: it holds the
 * daemon lock throughout, so none can start half-way. The order matches a rotation's: the key
 * goes to the next slot, the registry file is renamed into place, the key is promoted; a start
 * after an interruption finishes the promotion (`openRegistry`).
 */
export async function importRegistry(options: ImportOptions): Promise<ImportResult> {
  const { paths } = options;
  ensurePrivateDir(paths);
  const lock = acquireDaemonLock(paths.lockFile, paths.pidFile);
  if (!lock) throw new HanactlError('INVALID_REQUEST', `The daemon is running; stop it first with \`${cliCommand()} daemon stop\`, then import.`);
  try {
    const replaced = existsSync(paths.registry);
    if (replaced && !options.force) {
      throw new HanactlError('INVALID_REQUEST', `A registry already exists at ${paths.registry}; importing would replace its connections. Give --force to replace it (export it first if you may need it).`);
    }
    const { registryKey, registryBytes } = await openExport(options.doc, options.passphrase);
    try {
      const slots = keySlots(paths, options.env, options.useKeyFile);
      let newKey: string | undefined;
      if (!slots.next) {
        const envKey = await slots.current.load();
        if (!envKey?.equals(registryKey)) {
          if (!options.printNewKey) {
            throw new HanactlError(
              'INVALID_REQUEST',
              `The registry key would come from ${slots.current.description}, which hanactl cannot set. Give --print-new-key to have the imported key printed once, then set HANACTL_REGISTRY_KEY to it before starting the daemon. Nothing was written.`,
            );
          }
          newKey = registryKey.toString('base64');
        }
      }
      const tmp = `${paths.registry}.import-${process.pid}`;
      const removeTmp = () => {
        for (const s of ['', '-wal', '-shm', '-journal']) rmSync(`${tmp}${s}`, { force: true });
      };
      removeTmp();
      try {
        writeFileSync(tmp, registryBytes, { flag: 'wx', mode: 0o600 });
        if (!Registry.opensWith(tmp, registryKey, true)) {
          throw new HanactlError('INVALID_REQUEST', 'The key in the export does not open the registry in it; the file was not made by this hanactl. Nothing was written.');
        }
        if (slots.next) {
          await slots.next.replace(registryKey);
          if (!(await slots.next.load())?.equals(registryKey)) throw new HanactlError('REGISTRY_LOCKED', `The key could not be read back from ${slots.next.description}; nothing was changed.`);
        }
        // A stale WAL of the registry being replaced must not be replayed into the new one.
        for (const s of ['-wal', '-shm', '-journal']) rmSync(`${paths.registry}${s}`, { force: true });
        renameSync(tmp, paths.registry);
      } finally {
        removeTmp();
      }
      if (slots.next) {
        await slots.current.replace(registryKey);
        if (!(await slots.current.load())?.equals(registryKey)) {
          throw new HanactlError('REGISTRY_LOCKED', `The key could not be stored in ${slots.current.description}; it waits in ${slots.next.description} and the daemon moves it into place at its next start.`);
        }
        await slots.next.remove();
      }
      return { keySource: slots.current.source, keyDescription: slots.current.description, replaced, ...(newKey ? { newKey } : {}) };
    } finally {
      registryKey.fill(0);
    }
  } finally {
    lock.release();
  }
}
