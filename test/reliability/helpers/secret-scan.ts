import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A fresh password nobody could guess, planted in a suite's connections. */
export function plantSecret(label: string): string {
  return `planted-${label}-${randomBytes(9).toString('hex')}`;
}

function filesUnder(dir: string): string[] {
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return filesUnder(path);
    return e.isFile() ? [path] : [];
  });
}

/**
 * Collects everything a suite produced — CLI output, shim stderr, tool results, API errors —
 * and, at the end, every file under the hanactl home (registry and its -wal/-shm, audit.db,
 * daemon and start logs, config), and looks for the planted password in the clear, in base64
 * and in hex. `hits()` names where it was found; a suite passes only with none.
 */
export class SecretScan {
  readonly #secret: string;
  readonly #haystacks: [string, string][] = [];
  readonly #homes: string[] = [];

  constructor(secret: string) {
    this.#secret = secret;
  }

  /** Something a program said: a CLI's output, a tool result, an error message. */
  add(where: string, text: unknown): void {
    this.#haystacks.push([where, typeof text === 'string' ? text : (JSON.stringify(text) ?? String(text))]);
  }

  /** A hanactl home whose files are scanned when `hits()` runs. */
  addHome(dir: string): void {
    this.#homes.push(dir);
  }

  /** Where the secret was found (empty when nowhere), and how much was scanned. */
  hits(): { hits: string[]; scannedFiles: number; scannedTexts: number; scannedBytes: number } {
    const needles = [
      Buffer.from(this.#secret, 'utf8'),
      Buffer.from(Buffer.from(this.#secret).toString('base64'), 'latin1'),
      Buffer.from(Buffer.from(this.#secret).toString('hex'), 'latin1'),
      Buffer.from(this.#secret, 'utf16le'),
    ];
    const hits: string[] = [];
    let bytes = 0;
    let files = 0;
    const look = (where: string, data: Buffer) => {
      bytes += data.length;
      if (needles.some((n) => data.includes(n))) hits.push(where);
    };
    for (const [where, text] of this.#haystacks) look(where, Buffer.from(text, 'utf8'));
    for (const home of this.#homes) {
      for (const file of filesUnder(home)) {
        try {
          if (statSync(file).size > 200_000_000) continue;
          look(file, readFileSync(file));
          files++;
        } catch {
          // removed while scanning (a -shm file at close)
        }
      }
    }
    return { hits, scannedFiles: files, scannedTexts: this.#haystacks.length, scannedBytes: bytes };
  }
}
