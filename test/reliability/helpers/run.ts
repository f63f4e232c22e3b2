import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';

/** Runs a command to completion; rejects with its output when it exits non-zero. */
export function run(
  command: string,
  args: readonly string[],
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} ${args.join(' ')} exited ${code ?? signal}: ${out.slice(-2000)}`));
    });
  });
}

/** Where `name` is on the PATH (`command -v`), or undefined when it is not. */
export function onPath(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/** True when `attempt` resolves, false when it rejects. */
export async function succeeds(attempt: () => Promise<unknown>): Promise<boolean> {
  try {
    await attempt();
    return true;
  } catch {
    return false;
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/** True when this process runs as root (database servers then run as their own OS user, or with --user=root). */
export const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * What a suite does when a tool it needs is missing: in CI a failure (the suite must not pass by
 * skipping), elsewhere a skip with a message that says what to install.
 */
export function missingTool(what: string, install: string): null {
  const message = `${what} is not available; install ${install}.`;
  if (process.env.CI) throw new Error(`${message} (CI must run this suite)`);
  console.warn(`Skipping: ${message}`);
  return null;
}
