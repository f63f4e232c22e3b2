import { chmodSync, lstatSync, mkdirSync } from 'node:fs';
import { HanactlError } from '../../shared/errors.js';
import { assertPrivateRunDir, type RunDirPaths } from '../../shared/private-run-dir.js';

/**
 * Makes the home and the socket folder (0700) and checks them as ssh-agent and gpg-agent do,
 * with the clients' own check (shared/private-run-dir.ts): nothing on the way to the socket can
 * be swapped by another user, the socket folder is a real folder of this user. The daemon is
 * stricter than its clients: its socket folder admits no group or world access at all.
 */
export function ensurePrivateDir(paths: RunDirPaths): void {
  assertPrivateRunDir(paths); // before making anything inside a folder another user controls
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  mkdirSync(paths.runDir, { recursive: true, mode: 0o700 });
  if (process.platform === 'win32') return;
  const info = lstatSync(paths.runDir);
  const mine = info.isDirectory() && info.uid === process.getuid?.();
  if (mine && (info.mode & 0o077) !== 0) {
    const mode = (info.mode & 0o777).toString(8);
    throw new HanactlError(
      'FORBIDDEN',
      `${paths.runDir} is accessible to other users (mode ${mode}); run \`chmod 700 ${paths.runDir}\` and start again.`,
    );
  }
  assertPrivateRunDir(paths);
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
