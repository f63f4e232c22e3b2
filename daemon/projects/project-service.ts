import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError, isHanactlError } from '../../shared/errors.js';
import { type DetectRequest, type DetectResult, PROJECT_PREFIX, type ProjectScope } from '../../shared/project-schemas.js';
import type { ConnectionInfo, ProjectStatus } from '../../shared/schemas.js';
import { type ConnectionRecord, makeRecord } from '../registry/connection-record.js';
import { toConnectionInfo } from '../registry/connection-service.js';
import type { ProjectFiles } from './project-files.js';
import { type Resolution, resolveSources } from './project-resolver.js';
import { findProjectRoot, type ProjectRoot } from './project-root.js';
import type { SessionExtras, SessionSources } from './session-sources.js';
import { asObject, parseJsonText } from './source-error.js';
import type { TrustStore } from './trust-store.js';

export interface ProjectServiceDeps {
  readonly trust: Pick<TrustStore, 'containing'>;
  readonly files: ProjectFiles;
  /** `~/.hana-cli` of the daemon's user. */
  readonly hanaCliHome: string;
  readonly sessions: SessionSources;
  /**
   * Called when a project connection's file now says something else (another target or
   * password): the previous record, so its pool, warm connections and all, can be closed
   * rather than kept open under credentials nobody uses any more.
   */
  readonly onReplaced?: (previous: ConnectionRecord) => void;
}

/** A project connection: a read-only record that remembers the file it came from. */
export type ProjectRecord = ConnectionRecord & { readonly source: string };

interface Loaded {
  readonly root: ProjectRoot;
  readonly resolution: Resolution;
  readonly records: readonly ProjectRecord[];
  readonly primary: string | null;
}

/** A shell-safe rendering of a path for a command a person will paste. */
export function shellPath(path: string): string {
  return /^[A-Za-z0-9_./~+@%:=-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** The error an agent gets for a folder nobody trusted: it names the exact command. */
export function untrustedError(root: string): HanactlError {
  const command = `${cliCommand()} trust ${shellPath(root)}`;
  return new HanactlError(
    'FORBIDDEN',
    `The project folder ${root} is not trusted, so hanactl did not read its connection files. Ask a person to run \`${command}\` (only a person can trust a folder; no tool can).`,
    { hint: command },
  );
}

/** Files in a project root that hold (or configure) connections, by name; `package.json` counts in a CAP project. */
const CONNECTION_FILES = ['.cdsrc-private.json', '.cdsrc.json', 'default-env.json', '.env'] as const;

/**
 * Whether an untrusted root may hold project connections, judged by file names alone (nothing
 * is read): a connection file, a CAP project (its package.json may configure the database), or
 * a connection file or VCAP_SERVICES the caller named.
 */
function mayHoldConnections(root: ProjectRoot, extras: SessionExtras): boolean {
  if (extras.connFile !== undefined || extras.vcapServices !== undefined) return true;
  // A CAP project: package.json beside db/, srv/ or app/ (`/srv` alone is no project).
  if (root.markers.includes('package.json') && root.capFolders.length > 0) return true;
  return CONNECTION_FILES.some((name) => existsSync(join(root.root, name)));
}

/**
 * Project context, daemon side: finds a path's project root, checks it lies inside a folder a
 * person trusted, runs the connection chain, and serves the result as `project:<name>`
 * connections (read-only; their secrets never leave the daemon). Every call re-runs the
 * chain; file reads are cached by modification stamp, so a changed file is read again.
 */
export class ProjectService {
  readonly #deps: ProjectServiceDeps;
  /** The last record each project root yielded for each name. */
  readonly #lastSeen = new Map<string, ProjectRecord>();

  constructor(deps: ProjectServiceDeps) {
    this.#deps = deps;
  }

  /** The session ended: what it announced with `detect` is dropped. */
  forgetSession(session: string): void {
    this.#deps.sessions.forget(session);
  }

  /** `POST /v1/projects/detect`: what the project is and yields; names and engines only. */
  detect(request: DetectRequest): DetectResult {
    const extras: SessionExtras = {
      ...(request.connFile ? { connFile: request.connFile } : {}),
      ...(request.vcapServices !== undefined ? { vcapServices: request.vcapServices } : {}),
      ...(request.hanaCli ? { hanaCli: request.hanaCli } : {}),
    };
    if (request.session) this.#deps.sessions.set(request.session, extras);
    const loaded = this.#load(request.path, extras);
    const signals = [...loaded.root.capFolders, ...this.#capSignals(loaded.root)];
    const isCap = signals.some((s) => s !== 'db/' && s !== 'app/');
    return {
      path: request.path,
      root: loaded.root.root,
      markers: [...loaded.root.markers],
      cap: { isCap, signals },
      connections: loaded.records.map((r) => ({
        name: r.name,
        engine: r.target.engine,
        source: r.source,
        primary: r.name === loaded.primary,
      })),
      primary: loaded.primary,
      sources: [...loaded.resolution.sources],
    };
  }

  /** The project's connections for a listing, and its status; an untrusted or missing folder is a status, not an error. */
  listing(scope: ProjectScope): { connections: ConnectionInfo[]; project: ProjectStatus } {
    const path = scope.project ?? '';
    const extras = this.#deps.sessions.get(scope.session);
    try {
      const loaded = this.#load(path, extras);
      return { connections: loaded.records.map(info), project: { path, root: loaded.root.root, status: 'ok', primary: loaded.primary } };
    } catch (err) {
      if (!isHanactlError(err)) throw err;
      // Trust is only worth asking for where there is something to read: `/` or an empty folder says nothing.
      if (err.code === 'FORBIDDEN' && !mayHoldConnections(findProjectRoot(path), extras)) {
        return { connections: [], project: { path, status: 'none' } };
      }
      return { connections: [], project: { path, status: err.code === 'FORBIDDEN' ? 'untrusted' : 'error', message: err.message } };
    }
  }

  /**
   * The record behind `project:<name>` in the scope's project, with its secret (for the pools
   * only). `extras` replace the session's (the CLI's `--conn-file`).
   */
  resolve(ref: string, scope: ProjectScope, extras?: SessionExtras): ProjectRecord {
    if (!scope.project) {
      throw new HanactlError(
        'CONNECTION_NOT_FOUND',
        `"${ref}" is a project connection, and this call names no project folder; a person can copy it into the registry with \`${cliCommand()} import <dir> --connection ${ref}\`.`,
      );
    }
    const loaded = this.#load(scope.project, extras ?? this.#deps.sessions.get(scope.session));
    const record = loaded.records.find((r) => r.name === ref);
    if (record) return record;
    const known = loaded.records.map((r) => r.name).join(', ');
    throw new HanactlError(
      'CONNECTION_NOT_FOUND',
      `The project ${loaded.root.root} has no connection named "${ref}". ${known ? `It has: ${known}.` : `Its sources yield none; \`${cliCommand()} explain-project ${shellPath(loaded.root.root)}\` shows why.`}`,
    );
  }

  info(ref: string, scope: ProjectScope): ConnectionInfo {
    return info(this.resolve(ref, scope));
  }

  #load(path: string, extras: SessionExtras): Loaded {
    const root = findProjectRoot(path, (real) => this.#deps.trust.containing(real));
    if (!this.#deps.trust.containing(root.root)) throw untrustedError(root.root);
    const resolution = resolveSources({ root: root.root, files: this.#deps.files, hanaCliHome: this.#deps.hanaCliHome, ...extras });
    const used = resolution.used;
    const createdAt = new Date().toISOString();
    const records = (used?.candidates ?? []).map((c): ProjectRecord => {
      const record = makeRecord(
        {
          name: `${PROJECT_PREFIX}${c.name}`,
          target: c.target,
          description: `Found in ${used?.label}: ${c.detail}.`,
          allowWrite: false,
          context: [],
          createdAt,
        },
        c.password,
      );
      return Object.assign(record, { source: used?.file ?? used?.label ?? '' });
    });
    for (const record of records) this.#notice(root.root, record);
    return { root, resolution, records, primary: used ? `${PROJECT_PREFIX}${used.preferred}` : null };
  }

  #notice(root: string, record: ProjectRecord): void {
    const key = `${root}\0${record.name}`;
    const previous = this.#lastSeen.get(key);
    this.#lastSeen.set(key, record);
    if (previous && (previous.password !== record.password || JSON.stringify(previous.target) !== JSON.stringify(record.target))) {
      this.#deps.onReplaced?.(previous);
    }
  }

  /** `cds` in package.json (a section or an @sap/cds dependency) and a .cdsrc.json mark CAP. */
  #capSignals(root: ProjectRoot): string[] {
    const signals = root.markers.includes('.cdsrc.json') ? ['.cdsrc.json'] : [];
    const read = this.#deps.files.read(join(root.root, 'package.json'), 'package.json');
    if (read.kind !== 'file') return signals;
    try {
      const pkg = asObject(parseJsonText(read.text, 'package.json')) ?? {};
      const deps = { ...asObject(pkg.dependencies), ...asObject(pkg.devDependencies) };
      if (pkg.cds !== undefined || '@sap/cds' in deps || '@sap/cds-dk' in deps) signals.push('cds in package.json');
    } catch {
      // Malformed: the package.json source reports it.
    }
    return signals;
  }
}

function info(record: ProjectRecord): ConnectionInfo {
  return { ...toConnectionInfo(record), source: record.source };
}
