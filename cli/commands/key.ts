import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cliCommand } from '../../shared/cli-command.js';
import { readConfig, writeConfig } from '../../shared/config.js';
import { HanactlError } from '../../shared/errors.js';
import { exportRegistry, rotateKey } from '../../shared/key-client.js';
import { type CliContext, printJson } from '../context.js';
import { CliExit, EXIT } from '../exit.js';
import { readPassphrase } from '../passphrase.js';
import { progressLine } from '../style.js';

/** `hanactl key rotate [--print-new-key]`: the daemon re-encrypts the registry under a new key. */
export async function rotate(ctx: CliContext, options: { printNewKey?: boolean; json?: boolean }): Promise<void> {
  const result = await rotateKey(ctx.daemon, { ...(options.printNewKey ? { printNewKey: true } : {}) });
  if (options.json) return printJson(ctx, result);
  if (result.newKey) {
    ctx.err(
      result.keySource === 'env'
        ? 'The registry is re-encrypted. Set HANACTL_REGISTRY_KEY to the key below before the daemon next starts; it is shown only now, and the old key no longer opens the registry:'
        : 'The registry is re-encrypted and the new key is stored; as asked, here it is (shown only now):',
    );
    ctx.out(result.newKey);
    return;
  }
  ctx.out(`The registry is re-encrypted under a new key, stored in the ${result.keySource === 'file' ? 'key file' : 'OS keychain'}; the old key no longer opens it.`);
}

/** `hanactl key export --out FILE`: the registry and its key, wrapped by a passphrase the person types. */
export async function exportKey(ctx: CliContext, options: { out: string; passphraseStdin?: boolean; force?: boolean; json?: boolean }): Promise<void> {
  const file = resolve(ctx.cwd, options.out);
  if (existsSync(file) && !options.force) throw new CliExit(EXIT.failure, `${file} already exists; choose another file or give --force to overwrite it.`);
  const passphrase = await readPassphrase(ctx.stdin, process.stderr, { fromStdin: options.passphraseStdin, confirm: true, checkLength: true });
  const progress = progressLine(process.stderr, 'Wrapping the registry key…');
  let doc: Awaited<ReturnType<typeof exportRegistry>>;
  try {
    doc = await exportRegistry(ctx.daemon, { passphrase });
  } finally {
    progress.done();
  }
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600, flag: options.force ? 'w' : 'wx' });
  if (options.json) return printJson(ctx, { file, createdAt: doc.createdAt, bytes: Buffer.from(doc.registry.bytes, 'base64').length });
  ctx.out(`Wrote ${file}: the registry and its key, the key wrapped by your passphrase. On the other machine: ${cliCommand()} key import --in ${options.out}`);
  ctx.out('Anyone with the file and the passphrase can read every password in it; keep the file private and delete it once imported.');
}

/** `hanactl key import --in FILE`: installs an exported registry here, its key in this machine's key source. */
export async function importKey(
  ctx: CliContext,
  options: { in: string; passphraseStdin?: boolean; force?: boolean; keyFile?: boolean; printNewKey?: boolean; json?: boolean },
): Promise<void> {
  const file = resolve(ctx.cwd, options.in);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new HanactlError('INVALID_REQUEST', `Cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  const [{ parseExport }, { importRegistry }] = await Promise.all([import('../../daemon/keys/export-format.js'), import('../../daemon/keys/import-registry.js')]);
  const doc = parseExport(text, file);
  // Refused before the passphrase is asked for; checked again under the daemon lock.
  if (existsSync(ctx.paths.registry) && !options.force) {
    throw new CliExit(EXIT.failure, `A registry already exists at ${ctx.paths.registry}; importing would replace its connections. Give --force to replace it (export it first if you may need it).`);
  }
  if (options.keyFile) {
    mkdirSync(ctx.paths.home, { recursive: true, mode: 0o700 });
    const config = readConfig(ctx.paths.config);
    if (!config.keyFile) writeConfig(ctx.paths.config, { ...config, keyFile: true });
  }
  const passphrase = await readPassphrase(ctx.stdin, process.stderr, { fromStdin: options.passphraseStdin });
  const progress = progressLine(process.stderr, 'Unwrapping the registry key…');
  let result: Awaited<ReturnType<typeof importRegistry>>;
  try {
    result = await importRegistry({
      paths: ctx.paths,
      env: process.env,
      useKeyFile: readConfig(ctx.paths.config).keyFile === true,
      doc,
      passphrase,
      ...(options.force ? { force: true } : {}),
      ...(options.printNewKey ? { printNewKey: true } : {}),
    });
  } finally {
    progress.done();
  }
  if (options.json) return printJson(ctx, { registry: ctx.paths.registry, keySource: result.keySource, replaced: result.replaced, ...(result.newKey ? { newKey: result.newKey } : {}) });
  ctx.out(`Imported the registry into ${ctx.paths.registry}${result.replaced ? ' (the previous one is replaced)' : ''}; its key is in ${result.keyDescription}.`);
  if (result.newKey) {
    ctx.err('Set HANACTL_REGISTRY_KEY to this key before starting the daemon; it is shown only now:');
    ctx.out(result.newKey);
  }
  ctx.out(`Check it with: ${cliCommand()} list`);
}
