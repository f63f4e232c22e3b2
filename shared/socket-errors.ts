import { cliCommand } from './cli-command.js';
import { HanactlError, isHanactlError } from './errors.js';

/** Socket errors that mean no daemon is there to answer (one may be started). */
export const UNREACHABLE = new Set(['ENOENT', 'ECONNREFUSED', 'ENOTSOCK']);
const DROPPED = new Set(['ECONNRESET', 'EPIPE']);
const DENIED = new Set(['EACCES', 'EPERM']);

/**
 * A system error on the daemon's socket as a HanactlError that names its cause and fix, for every
 * client of the socket (the CLI's HTTP client and the relay alike); anything else is returned as is.
 */
export function explainSocketError(err: unknown, socket: string): unknown {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (UNREACHABLE.has(code)) {
    const why =
      code === 'ECONNREFUSED'
        ? 'the socket is there but nothing listens on it (a daemon that stopped left it)'
        : code === 'ENOTSOCK'
          ? 'that path is not a socket'
          : 'there is no socket';
    return new HanactlError(
      'DAEMON_UNAVAILABLE',
      `No hanactl daemon is answering on ${socket}: ${why}. Start it with \`${cliCommand()} daemon start\` (or check \`${cliCommand()} daemon status\`).`,
    );
  }
  if (DENIED.has(code)) {
    return new HanactlError(
      'FORBIDDEN',
      `Permission denied on the hanactl socket ${socket} (${code}): it or its folder belongs to another user, or is closed to you. Run hanactl as the user who started the daemon, or set HANACTL_HOME to a folder of your own.`,
    );
  }
  if (DROPPED.has(code) || (err as Error).message === 'socket hang up') {
    return new HanactlError('DAEMON_RESTARTED', 'The hanactl daemon stopped while handling this call; the call can be retried.');
  }
  if (code === 'ENAMETOOLONG' || code === 'EINVAL') {
    return new HanactlError(
      'DAEMON_UNAVAILABLE',
      `The hanactl socket path ${socket} cannot be used (${code}; a Unix socket path is limited to about 100 bytes). Set HANACTL_HOME to a shorter folder.`,
    );
  }
  if (/^E[A-Z]+$/.test(code) && !isHanactlError(err)) {
    // Any other system error on the socket: named, never an unexplained INTERNAL.
    return new HanactlError('DAEMON_UNAVAILABLE', `The hanactl socket ${socket} cannot be reached (${code}: ${(err as Error).message}).`);
  }
  return err;
}
