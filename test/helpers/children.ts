import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach } from 'vitest';

const live = new Set<ChildProcess>();

/**
 * Registers a child process a test started so that it is killed after the test, however the
 * test ends (a failed expectation included). Call `endChildrenAfterEach()` once per test file.
 */
export function track<T extends ChildProcess>(child: T): T {
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** SIGKILLs every tracked child still running, and waits until each has exited. */
export async function killTracked(): Promise<void> {
  const running = [...live].filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(
    running.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  live.clear();
}

/** Installs the after-each and after-all hooks that end every tracked child. */
export function endChildrenAfterEach(): void {
  afterEach(killTracked);
  afterAll(killTracked);
}

/**
 * Resolves with everything `stream` has sent once it matches `pattern`; rejects if the stream
 * ends first. Waits for data events, never for a fixed time.
 */
export function waitForOutput(stream: NodeJS.ReadableStream, pattern: RegExp, seen: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    if (pattern.test(seen())) return resolve(seen());
    const onData = () => {
      if (!pattern.test(seen())) return;
      cleanup();
      resolve(seen());
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(`the stream ended before ${pattern} appeared; it sent: ${seen()}`));
    };
    const cleanup = () => {
      stream.off('data', onData);
      stream.off('end', onEnd);
    };
    stream.on('data', onData);
    stream.on('end', onEnd);
  });
}
