import { cliCommand } from '../../shared/cli-command.js';
import { readConfig } from '../../shared/config.js';
import type { Paths } from '../../shared/paths.js';

/** Which key source a daemon started for this home would use, and whether one an editor starts finds it too. */
export interface KeyAdvice {
  readonly source: 'env' | 'file' | 'keychain';
  /** A daemon an editor's session starts (without this shell's environment) gets the key. */
  readonly editorReady: boolean;
  readonly message: string;
  /** What to do when `editorReady` is false. */
  readonly fix?: string;
}

const KEY_FILE_FIX =
  `Opt into a key file once: \`${cliCommand()} daemon start --key-file\` (remembered in config.json; a 0600 file beside the registry, weaker than a keychain).`;

/**
 * An editor starts its MCP session with its own environment, not this shell's: a key in
 * HANACTL_REGISTRY_KEY does not reach a daemon it starts, and hanactl never writes the key into
 * an editor's config. On a machine with no keychain (SSH, containers, WSL) only a key file does.
 * The keychain is asked once, within `timeoutMs`; its key, if any, is wiped at once.
 */
export async function keyAdvice(paths: Paths, env: NodeJS.ProcessEnv = process.env, timeoutMs = 3_000): Promise<KeyAdvice> {
  if (env.HANACTL_REGISTRY_KEY) {
    return {
      source: 'env',
      editorReady: false,
      message:
        "The registry key comes from HANACTL_REGISTRY_KEY in this shell. An editor does not inherit this shell's environment, and hanactl never writes the key into a config file: a daemon an editor starts would not find it.",
      fix: `Start the daemon from this shell before the editor needs it (\`${cliCommand()} daemon start\`), or move the key into a key file: \`${cliCommand()} key export --out FILE\`, \`${cliCommand()} daemon stop\`, then with HANACTL_REGISTRY_KEY unset \`${cliCommand()} key import --in FILE --force --key-file\`.`,
    };
  }
  let useKeyFile = false;
  try {
    useKeyFile = readConfig(paths.config).keyFile === true;
  } catch {} // an unreadable config is doctor's to report
  if (useKeyFile) {
    return { source: 'file', editorReady: true, message: `The daemon reads its registry key from the key file ${paths.keyFile}; an editor that starts it needs nothing more.` };
  }
  const reason = await keychainUnreachable(paths, timeoutMs);
  if (reason === undefined) {
    return { source: 'keychain', editorReady: true, message: 'The daemon keeps its registry key in the OS keychain; an editor in this desktop session reaches it too.' };
  }
  return {
    source: 'keychain',
    editorReady: false,
    message: `No OS keychain answers here (${reason}), so a daemon an editor starts cannot get its registry key (SSH sessions, containers and WSL usually have none).`,
    fix: KEY_FILE_FIX,
  };
}

/** Why the keychain cannot be used, or undefined when it answers. */
async function keychainUnreachable(paths: Paths, timeoutMs: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const [{ KeychainKeyStore }, { keychainAccount }] = await Promise.all([
      import('../../daemon/keys/keychain-key-store.js'),
      import('../../daemon/keys/key-slots.js'),
    ]);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`it did not answer within ${timeoutMs / 1000} s`)), timeoutMs);
      timer.unref();
    });
    const key = await Promise.race([new KeychainKeyStore(keychainAccount(paths)).load(), timeout]);
    key?.fill(0);
    return undefined;
  } catch (err) {
    // The store's own error goes on to name every remedy; the cause is its first sentence.
    const first = (err instanceof Error ? err.message : String(err)).split(/\.(?:\s|$)/)[0] ?? '';
    return first.replace(/^No OS keychain is reachable \((.*)\)$/s, '$1') || 'unknown error';
  } finally {
    clearTimeout(timer);
  }
}

/** The advice as the lines a command prints on stderr. */
export function adviceLines(advice: KeyAdvice): string {
  return advice.editorReady ? `Key source: ${advice.message}` : `warning: ${advice.message}\n  ${advice.fix}`;
}
