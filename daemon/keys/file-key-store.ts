import { lstat, open, readFile, rename, rm } from 'node:fs/promises';
import { HanactlError } from '../../shared/errors.js';
import { KEY_BYTES, type WritableKeyStore } from './key-store.js';

/**
 * A 0600 key file beside the registry, used only when a person opted in (`--key-file`).
 * Weaker than a keychain, as gh's and Docker's plain-text fallbacks are: anyone who can
 * read the person's files can read the key.
 */
export class FileKeyStore implements WritableKeyStore {
  readonly source = 'file' as const;
  readonly description: string;
  readonly #path: string;

  constructor(path: string) {
    this.#path = path;
    this.description = `the key file ${path} (opted in with --key-file; weaker than a keychain)`;
  }

  async load(): Promise<Buffer | null> {
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(this.#path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (!info.isFile()) throw new HanactlError('REGISTRY_LOCKED', `The key file ${this.#path} is not a regular file; remove it.`);
    if (process.platform !== 'win32') {
      if ((info.mode & 0o077) !== 0) {
        throw new HanactlError('REGISTRY_LOCKED', `The key file ${this.#path} is readable by others; run \`chmod 600 ${this.#path}\`.`);
      }
      if (typeof process.getuid === 'function' && info.uid !== process.getuid()) {
        throw new HanactlError('REGISTRY_LOCKED', `The key file ${this.#path} belongs to another user.`);
      }
    }
    const key = Buffer.from((await readFile(this.#path, 'utf8')).trim(), 'base64');
    if (key.length !== KEY_BYTES) throw new HanactlError('REGISTRY_LOCKED', `The key file ${this.#path} does not hold a 32-byte key.`);
    return key;
  }

  async save(key: Buffer): Promise<void> {
    await writeKey(this.#path, key);
  }

  /** Written beside the file and renamed over it: a reader sees the old key or the new, never half. */
  async replace(key: Buffer): Promise<void> {
    const tmp = `${this.#path}.tmp-${process.pid}`;
    await rm(tmp, { force: true });
    try {
      await writeKey(tmp, key);
      await rename(tmp, this.#path);
    } catch (err) {
      await rm(tmp, { force: true });
      throw err;
    }
  }

  async remove(): Promise<void> {
    await rm(this.#path, { force: true });
  }
}

async function writeKey(path: string, key: Buffer): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(`${key.toString('base64')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}
