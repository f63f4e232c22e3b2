import { lstatSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { HanactlError } from './errors.js';
import type { Paths } from './paths.js';

/** What the check looks at: the home, the socket folder and the socket. */
export type RunDirPaths = Pick<Paths, 'home' | 'runDir' | 'socket'>;

const WRITABLE_BY_OTHERS = 0o022;
const STICKY = 0o1000;
/** Symbolic links followed in the folders above the socket folder before giving up (as ELOOP). */
const MAX_LINKS = 40;

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw unsafe(
      `hanactl cannot inspect ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); it will not use a socket it cannot check.`,
    );
  }
}

function unsafe(message: string): HanactlError {
  return new HanactlError('FORBIDDEN', message);
}

const modeOf = (info: Stats) => (info.mode & 0o777).toString(8).padStart(3, '0');
const ownerFix = (path: string, uid: number) =>
  `make it yours (\`chown ${uid} ${path}\`, as root) or set HANACTL_HOME to a folder of your own`;

/**
 * A folder on the way to the socket folder (above it, the home's parents included) that another
 * user could use to swap what lies below it: owned by someone other than root and this user, or
 * writable by group or others without the sticky bit (/tmp's 1777 is safe: there only an
 * entry's owner may rename it). Symbolic links are followed only when root or this user owns
 * them; their targets are checked the same way, component by component.
 */
function checkAncestors(dir: string, uid: number): void {
  const pending = dir.split('/').filter(Boolean);
  let at = '/';
  let links = 0;
  checkAncestor(at, lstatSync(at), uid);
  while (pending.length > 0) {
    const name = pending.shift() as string;
    if (name === '.') continue;
    if (name === '..') {
      at = dirname(at);
      continue;
    }
    const next = join(at, name);
    const info = lstatOrUndefined(next);
    if (!info) return; // not made yet: whoever makes it makes it private, and the next call checks it
    if (info.isSymbolicLink()) {
      if (info.uid !== 0 && info.uid !== uid) {
        throw unsafe(`${next} is a symbolic link owned by user id ${info.uid}, who could point it elsewhere; ${ownerFix(next, uid)}.`);
      }
      if (++links > MAX_LINKS) throw unsafe(`${dir} has too many symbolic links on its way to check.`);
      const target = readlinkSync(next);
      pending.unshift(...target.split('/').filter(Boolean));
      if (isAbsolute(target)) at = '/';
      continue;
    }
    checkAncestor(next, info, uid);
    at = next;
  }
}

function checkAncestor(path: string, info: Stats, uid: number): void {
  if (!info.isDirectory()) throw unsafe(`${path} is not a folder, yet the hanactl socket folder lies below it.`);
  if (info.uid !== 0 && info.uid !== uid) {
    throw unsafe(`${path} belongs to user id ${info.uid}, who could swap the hanactl socket folder below it; ${ownerFix(path, uid)}.`);
  }
  if ((info.mode & WRITABLE_BY_OTHERS) !== 0 && (info.mode & STICKY) === 0) {
    throw unsafe(
      `${path} is writable by other users (mode ${modeOf(info)}), who could swap the hanactl socket folder below it; run \`chmod go-w ${path}\` or set HANACTL_HOME to a private folder.`,
    );
  }
}

/** A folder hanactl keeps (the home, the socket folder): a real folder of this user that no one else can write to. */
function checkOwnFolder(path: string, what: string, uid: number): void {
  const info = lstatOrUndefined(path);
  if (!info) return;
  if (info.isSymbolicLink()) {
    throw unsafe(
      `The hanactl ${what} ${path} is a symbolic link; hanactl follows no link to its socket. Replace it with a real folder (mode 700).`,
    );
  }
  if (!info.isDirectory()) throw unsafe(`The hanactl ${what} ${path} is not a folder; remove it or set HANACTL_HOME elsewhere.`);
  if (info.uid !== uid) {
    throw unsafe(`The hanactl ${what} ${path} belongs to user id ${info.uid}, not to you (${uid}); ${ownerFix(path, uid)}.`);
  }
  if ((info.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw unsafe(
      `The hanactl ${what} ${path} is writable by other users (mode ${modeOf(info)}), who could swap the daemon's socket for their own; run \`chmod 700 ${path}\`.`,
    );
  }
}

/**
 * Checks, before a byte goes to the daemon, that the socket is the user's own: the home, the
 * socket folder and every folder above it cannot be used by another user to swap the socket,
 * and neither the socket folder nor the socket is a symbolic link (lstat, never stat; owners
 * compared by uid). Throws FORBIDDEN with a sentence naming the folder and the fix.
 *
 * The CLI, the shim (and the relay) call it before they connect; the daemon calls it before it
 * starts. Parts not made yet pass: they are made private by whoever makes them, and the next
 * call checks them. On Windows it does nothing: the socket is a named pipe, which has no folder
 * to swap, and its access is the pipe's own ACL.
 */
export function assertPrivateRunDir(paths: RunDirPaths): void {
  if (process.platform === 'win32') return;
  const uid = process.getuid?.();
  if (uid === undefined) return;
  const runDir = resolve(paths.runDir);
  const home = resolve(paths.home);
  // The home may be a link (of this user or root) to a folder of this user; the socket folder may not.
  checkAncestors(dirname(home), uid);
  const homeInfo = lstatOrUndefined(home);
  if (homeInfo?.isSymbolicLink()) {
    checkAncestors(home, uid); // the link's owner and every folder on its way
    checkOwnFolder(realpathSync(home), 'home', uid);
  } else if (homeInfo) checkOwnFolder(home, 'home', uid);
  checkAncestors(dirname(runDir), uid);
  checkOwnFolder(runDir, 'socket folder', uid);
  const socket = lstatOrUndefined(paths.socket);
  if (!socket) return;
  if (socket.isSymbolicLink())
    throw unsafe(
      `The hanactl socket ${paths.socket} is a symbolic link; hanactl connects to no link. Remove it and start the daemon again.`,
    );
  if (!socket.isSocket()) throw unsafe(`${paths.socket} is not a socket; remove it and start the daemon again.`);
  if (socket.uid !== uid) {
    throw unsafe(
      `The hanactl socket ${paths.socket} belongs to user id ${socket.uid}, not to you (${uid}); another user may be listening on it. Remove it and start the daemon again.`,
    );
  }
  if ((socket.mode & WRITABLE_BY_OTHERS) !== 0) {
    throw unsafe(
      `The hanactl socket ${paths.socket} is writable by other users (mode ${modeOf(socket)}); run \`chmod 600 ${paths.socket}\`.`,
    );
  }
}
