import { existsSync, lstatSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ensurePrivateDir } from '../../daemon/lifecycle/run-dir.js';
import { cliCommand } from '../../shared/cli-command.js';
import { readConfig } from '../../shared/config.js';
import type { DaemonClient } from '../../shared/daemon-client.js';
import { isHanactlError } from '../../shared/errors.js';
import { installRoot } from '../../shared/install-root.js';
import type { Paths } from '../../shared/paths.js';
import { ConnectionListSchema, ConnectionTestResultSchema, type Health, HealthSchema } from '../../shared/schemas.js';
import { hanactlVersion } from '../../shared/version.js';

const require = createRequire(import.meta.url);

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `hanactl doctor`: what was checked, what was found, what to do next. */
export interface Check {
  readonly name: string;
  readonly status: CheckStatus;
  readonly message: string;
  readonly fix?: string;
}

const ok = (name: string, message: string): Check => ({ name, status: 'ok', message });
const warn = (name: string, message: string, fix?: string): Check => ({ name, status: 'warn', message, ...(fix ? { fix } : {}) });
const fail = (name: string, message: string, fix?: string): Check => ({ name, status: 'fail', message, ...(fix ? { fix } : {}) });
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

/** Resolves with the promise's value, or rejects after `ms` with a sentence. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function checkNode(version: string = process.versions.node): Check {
  const major = Number.parseInt(version.split('.')[0] ?? '0', 10);
  return major >= 20
    ? ok('node', `v${version} at ${process.execPath}`)
    : fail(
        'node',
        `v${version} is too old; hanactl needs Node 20 or later.`,
        `Install Node 20 or later, then run \`npm install\` again in ${installRoot()}.`,
      );
}

interface MemoryDb {
  pragma(sql: string, options?: { simple: boolean }): unknown;
  prepare(sql: string): { pluck(): { get(): unknown } };
  close(): void;
}

/** The registry's SQLite build loads and has the SQLCipher cipher. */
export function checkSqliteModule(): Check {
  const name = 'sqlite module';
  try {
    const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => MemoryDb;
    const db = new Database(':memory:');
    try {
      const version = db.prepare('SELECT sqlite_version()').pluck().get();
      const cipher = db.pragma(`cipher='sqlcipher'`, { simple: true });
      if (cipher !== 'sqlcipher')
        return fail(
          name,
          `better-sqlite3-multiple-ciphers loads but has no SQLCipher cipher (${String(cipher)}).`,
          'Reinstall it: `npm rebuild better-sqlite3-multiple-ciphers`.',
        );
      return ok(name, `better-sqlite3-multiple-ciphers loads (SQLite ${String(version)}, SQLCipher cipher available)`);
    } finally {
      db.close();
    }
  } catch (err) {
    return fail(
      name,
      `better-sqlite3-multiple-ciphers does not load: ${reason(err)}`,
      `Rebuild it for this Node: \`npm rebuild better-sqlite3-multiple-ciphers\` in ${installRoot()}.`,
    );
  }
}

/** @napi-rs/keyring loads; only a failure when the keychain is the key source. */
export async function checkKeyringModule(keychainInUse: boolean): Promise<Check> {
  const name = 'keyring module';
  try {
    await import('@napi-rs/keyring');
    return ok(name, '@napi-rs/keyring loads');
  } catch (err) {
    const message = `@napi-rs/keyring does not load: ${reason(err)}`;
    const fix = `Reinstall it: \`npm install\` in ${installRoot()}; or use HANACTL_REGISTRY_KEY or a key file (\`${cliCommand()} daemon start --key-file\`).`;
    return keychainInUse ? fail(name, message, fix) : warn(name, `${message} (not needed: the key does not come from the keychain)`, fix);
  }
}

/**
 * The key source this shell would give a daemon, whether it answers, and whether its key
 * opens the registry. A key waiting in the next slot means a key change was interrupted.
 */
export async function checkKey(paths: Paths, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Check[]> {
  const { keySlots } = await import('../../daemon/keys/key-slots.js');
  const { Registry } = await import('../../daemon/registry/registry.js');
  let useKeyFile = false;
  try {
    useKeyFile = readConfig(paths.config).keyFile === true;
  } catch (err) {
    return [fail('config', reason(err), `Fix or remove ${paths.config}.`)];
  }
  const slots = keySlots(paths, env, useKeyFile);
  const name = 'key source';
  let key: Buffer | null;
  try {
    key = await within(slots.current.load(), timeoutMs, slots.current.description);
  } catch (err) {
    return [
      fail(
        name,
        `${slots.current.source}: ${reason(err)}`,
        isHanactlError(err) ? undefined : `Unlock the keychain, or use HANACTL_REGISTRY_KEY or \`${cliCommand()} daemon start --key-file\`.`,
      ),
    ];
  }
  const checks: Check[] = [];
  const weak = slots.current.source === 'file' ? ' (weaker than a keychain: anyone who can read your files can read the key)' : '';
  const registryExists = existsSync(paths.registry);
  if (!key) {
    checks.push(
      registryExists
        ? fail(
            name,
            `${slots.current.description} holds no key, but the registry ${paths.registry} exists.`,
            'Restore the key (or set HANACTL_REGISTRY_KEY to it); hanactl will not make a new one over an existing registry.',
          )
        : ok(name, `${slots.current.description} is reachable; no key yet (made when the daemon first starts)${weak}`),
    );
  } else {
    checks.push(ok(name, `${slots.current.description}${weak}`));
  }
  const pending = slots.next ? await slots.next.load().catch(() => null) : null;
  if (pending)
    checks.push(
      warn(
        'key change',
        `a new key waits in ${slots.next?.description}: a key rotation or import was interrupted.`,
        `Start the daemon (\`${cliCommand()} daemon start\`); it finishes the change at start-up.`,
      ),
    );
  if (registryExists) {
    const mode = statSync(paths.registry).mode & 0o777;
    if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
      checks.push(fail('registry', `${paths.registry} is readable by others (mode ${mode.toString(8)}).`, `chmod 600 ${paths.registry}`));
    } else if (key && Registry.opensWith(paths.registry, key)) {
      checks.push(ok('registry', `${paths.registry} opens with this key`));
    } else if (key && !(pending && Registry.opensWith(paths.registry, pending))) {
      checks.push(
        fail(
          'registry',
          `${paths.registry} does not open with the key from ${slots.current.description}.`,
          `Use the key it was created with (after \`${cliCommand()} key rotate --print-new-key\`, the printed one).`,
        ),
      );
    }
  } else {
    checks.push(ok('registry', `none yet at ${paths.registry} (made when the daemon first starts)`));
  }
  key?.fill(0);
  pending?.fill(0);
  return checks;
}

/** The socket folder: a real folder, yours, 0700 (ssh-agent's rules). Never created here. */
export function checkRunDir(paths: Paths): Check {
  const name = 'socket folder';
  try {
    lstatSync(paths.runDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      return ok(name, `${paths.runDir} does not exist yet (the daemon makes it 0700 at start)`);
    return fail(name, `${paths.runDir}: ${reason(err)}`);
  }
  try {
    ensurePrivateDir(paths); // it exists, so this only checks
    return ok(name, `${paths.runDir} is yours and private (0700)`);
  } catch (err) {
    return fail(name, reason(err));
  }
}

export interface DaemonFindings {
  readonly checks: Check[];
  readonly health?: Health;
}

/** Is a daemon answering, is it this version, does it use the key source this shell would? */
export async function checkDaemon(probe: DaemonClient, expectedKeySource: string | undefined, timeoutMs: number): Promise<DaemonFindings> {
  const name = 'daemon';
  let health: Health;
  const ask = () => probe.request('GET', '/v1/health', undefined, HealthSchema, AbortSignal.timeout(timeoutMs));
  try {
    // A daemon that finds its socket folder opened refuses the request and closes the folder
    // again (the socket folder check above names it); the second ask is answered.
    health = await ask().catch((err: unknown) => {
      if (isHanactlError(err) && err.code === 'FORBIDDEN') return new Promise((r) => setTimeout(r, 200)).then(ask);
      throw err;
    });
  } catch (err) {
    if (isHanactlError(err) && err.code === 'DAEMON_UNAVAILABLE') {
      return {
        checks: [
          warn(
            name,
            'not running (it starts on demand when an editor or a command needs it)',
            `Start it with \`${cliCommand()} daemon start\` to test the connections too.`,
          ),
        ],
      };
    }
    return {
      checks: [
        fail(
          name,
          `does not answer properly: ${reason(err)}`,
          `Restart it: \`${cliCommand()} daemon stop && ${cliCommand()} daemon start\`; see \`${cliCommand()} daemon logs\`.`,
        ),
      ],
    };
  }
  const checks: Check[] = [];
  const cli = hanactlVersion();
  checks.push(
    health.version === cli
      ? ok(name, `running, pid ${health.pid}, version ${health.version}, node ${health.node}`)
      : warn(
          name,
          `running version ${health.version} (pid ${health.pid}), but this command is version ${cli}.`,
          `Restart it so both match: \`${cliCommand()} daemon stop && ${cliCommand()} daemon start\`.`,
        ),
  );
  if (expectedKeySource && health.keySource !== expectedKeySource) {
    checks.push(
      warn(
        'daemon key source',
        `the daemon uses ${health.keySource}, but a daemon started from this shell would use ${expectedKeySource}.`,
        'Start it from the environment you mean to use (HANACTL_REGISTRY_KEY set or not).',
      ),
    );
  }
  if (process.platform !== 'win32' && existsSync(health.socket)) {
    const mode = statSync(health.socket).mode & 0o777;
    if ((mode & 0o077) !== 0)
      checks.push(
        fail(
          'socket',
          `${health.socket} has mode ${mode.toString(8)}; others may connect.`,
          `chmod 600 ${health.socket}, or restart the daemon.`,
        ),
      );
  }
  return { checks, health };
}

/** `test` every connection through the daemon, in parallel, each bounded in time. */
export async function checkConnections(
  probe: DaemonClient,
  timeoutMs: number,
  onProgress?: (done: number, total: number) => void,
): Promise<Check[]> {
  let names: string[];
  try {
    names = (
      await probe.request('GET', '/v1/connections', undefined, ConnectionListSchema, AbortSignal.timeout(timeoutMs))
    ).connections.map((c) => c.name);
  } catch (err) {
    return [fail('connections', `could not be listed: ${reason(err)}`)];
  }
  if (names.length === 0) return [ok('connections', `none registered yet (add one with \`${cliCommand()} add <name> <url>\`)`)];
  let done = 0;
  onProgress?.(0, names.length);
  return Promise.all(
    names.map(async (name): Promise<Check> => {
      const label = `connection ${name}`;
      try {
        const result = await probe.request(
          'POST',
          `/v1/connections/${encodeURIComponent(name)}/test`,
          {},
          ConnectionTestResultSchema,
          AbortSignal.timeout(timeoutMs),
        );
        return ok(label, `answers in ${result.latencyMs} ms${result.serverVersion ? ` (${result.serverVersion})` : ''}`);
      } catch (err) {
        const timedOut = isHanactlError(err) && err.code === 'QUERY_CANCELLED';
        return fail(
          label,
          timedOut ? `did not answer within ${timeoutMs / 1000} s` : reason(err),
          `Check the server and the URL (\`${cliCommand()} list\`); fix it with \`${cliCommand()} add ${name} <url> --replace\`, or remove it with \`${cliCommand()} remove ${name}\`.`,
        );
      } finally {
        onProgress?.(++done, names.length);
      }
    }),
  );
}

/**
 * Editors start sessions with the bundled relay (dist/shim.cjs, through bin/hanactl-mcp); without
 * it they fall back to the full CLI, which starts several times slower.
 */
export function checkShimBundle(root: string = installRoot()): Check {
  const name = 'shim bundle';
  const bundle = join(root, 'dist', 'shim.cjs');
  if (!existsSync(bundle)) {
    return warn(name, `${bundle} is missing; editors start the full CLI, which is slower.`, `Build it: \`npm run build\` in ${root}.`);
  }
  return ok(name, bundle);
}
