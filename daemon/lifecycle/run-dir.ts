import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { HanactlError } from '../../shared/errors.js';

/**
 * Creates the socket folder 0700 and checks it as ssh-agent and gpg-agent do: it must be a
 * real directory (not a symlink), owned by this user, with no group or world access.
 */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  const info = lstatSync(dir);
  if (info.isSymbolicLink()) {
    throw new HanactlError('FORBIDDEN', `${dir} is a symbolic link; hanactl keeps its socket only in a real folder. Remove the link and start again.`);
  }
  if (!info.isDirectory()) throw new HanactlError('FORBIDDEN', `${dir} is not a folder; remove it and start again.`);
  const uid = process.getuid?.();
  if (uid !== undefined && info.uid !== uid) {
    throw new HanactlError('FORBIDDEN', `${dir} belongs to user id ${info.uid}, not to you (${uid}); another user could hijack the socket. Remove it or set HANACTL_HOME to a folder of yours.`);
  }
  if ((info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8);
    throw new HanactlError('FORBIDDEN', `${dir} is accessible to other users (mode ${mode}); run \`chmod 700 ${dir}\` and start again.`);
  }
}

/**
 * A check for every request: the socket folder must still be private. Node cannot ask a Unix
 * socket who the peer is, so the folder's permissions are the boundary; if they were loosened
 * while the daemon runs (another user could now connect), the request is refused and the folder
 * and socket are closed again.
 */
export function privateRunDirGuard(dir: string, socket: string): () => void {
  if (process.platform === 'win32') return () => {};
  const uid = process.getuid?.();
  return () => {
    let info: ReturnType<typeof lstatSync>;
    try {
      info = lstatSync(dir);
    } catch {
      throw new HanactlError('FORBIDDEN', `The socket folder ${dir} is gone; restart the daemon.`);
    }
    const socketMode = (() => {
      try {
        return lstatSync(socket).mode & 0o077;
      } catch {
        return 0;
      }
    })();
    const folderOpen = (info.mode & 0o077) !== 0 || info.isSymbolicLink() || (uid !== undefined && info.uid !== uid);
    if (!folderOpen) return;
    if (!info.isSymbolicLink() && (uid === undefined || info.uid === uid)) {
      chmodSync(dir, 0o700);
      if (socketMode !== 0) chmodSync(socket, 0o600);
    }
    throw new HanactlError(
      'FORBIDDEN',
      `The socket folder ${dir} was opened to other users while the daemon ran; hanactl refused this request and closed the folder again. Retry.`,
    );
  };
}
