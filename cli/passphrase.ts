import { HanactlError } from '../shared/errors.js';
import { MIN_PASSPHRASE_LENGTH } from '../shared/key-schemas.js';
import { promptHidden } from './password.js';

export interface PassphraseOptions {
  /** Read it from standard input (`--passphrase-stdin`) instead of a hidden prompt. */
  readonly fromStdin?: boolean;
  /** Ask twice on a terminal (a new passphrase). */
  readonly confirm?: boolean;
  /** Refuse one shorter than MIN_PASSPHRASE_LENGTH (a new passphrase). */
  readonly checkLength?: boolean;
}

/** A passphrase from a hidden prompt on a terminal, or from stdin; never from an argument. */
export async function readPassphrase(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream, options: PassphraseOptions): Promise<string> {
  let passphrase: string;
  if (options.fromStdin) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    passphrase = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
    if (passphrase === '') throw new HanactlError('INVALID_REQUEST', '--passphrase-stdin was given but stdin was empty.');
  } else {
    if (!stdin.isTTY) throw new HanactlError('INVALID_REQUEST', 'Cannot prompt for the passphrase without a terminal; pipe it in with --passphrase-stdin.');
    passphrase = await promptHidden('Passphrase: ', stdin, stderr);
    if (options.confirm && (await promptHidden('The same passphrase again: ', stdin, stderr)) !== passphrase) {
      throw new HanactlError('INVALID_REQUEST', 'The two passphrases differ; nothing was written.');
    }
  }
  if (options.checkLength && passphrase.length < MIN_PASSPHRASE_LENGTH) {
    throw new HanactlError('INVALID_REQUEST', `Use a passphrase of at least ${MIN_PASSPHRASE_LENGTH} characters: it alone protects every password in the export.`);
  }
  return passphrase;
}
