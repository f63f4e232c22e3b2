import { maskSecretText } from '../engines/credential-mask.js';

/** The longest part of a fatal error's message the log keeps. */
const MESSAGE_CHARS = 500;
/** The stack frames the log keeps: where it happened, not what it held. */
const FRAMES = 12;

/** What the log says of an error that ended the daemon: its kind, code, message (masked, cut) and stack frames. */
export function fatalFacts(err: unknown): { name: string; code?: string; message: string; frames: string[] } {
  const e = err instanceof Error ? err : new Error(String(err));
  const code = (e as { code?: unknown }).code;
  const message = maskSecretText(e.message.slice(0, MESSAGE_CHARS * 4)).slice(0, MESSAGE_CHARS);
  const frames = (e.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .slice(0, FRAMES)
    .map((line) => line.trim());
  return { name: e.name, ...(typeof code === 'string' ? { code } : {}), message, frames };
}

/** The part of pino the fatal handler uses. */
export interface FatalLog {
  fatal(facts: object, message: string): void;
}

/**
 * Makes an error that nothing caught end the daemon with a line in its log that says why (the
 * error's kind, code, message masked and cut, stack frames; no values, no secrets), written before
 * the process exits. Without it the daemon vanished and its log said nothing. Returns the
 * function that takes the handler off again.
 */
export function logFatalErrors(log: FatalLog, flushSync: () => void, exit: (code: number) => void = process.exit): () => void {
  const handler = (err: unknown, origin: string): void => {
    try {
      log.fatal({ error: fatalFacts(err), origin }, 'daemon stopped by an uncaught error');
      flushSync();
    } finally {
      exit(1);
    }
  };
  process.on('uncaughtException', handler);
  return () => process.off('uncaughtException', handler);
}
