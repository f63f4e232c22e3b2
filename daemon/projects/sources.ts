import { dirname, isAbsolute, join, resolve } from 'node:path';
import { cliCommand } from '../../shared/cli-command.js';
import type { HanaCliEnv } from '../../shared/hana-cli-env.js';
import { hanaEndpointDefaults } from '../../shared/hana-endpoint.js';
import { makeCandidate } from './candidate.js';
import { bindingNote, capDbEntries } from './cap-config.js';
import { connectionsFromCap, type KindHint } from './cap-source.js';
import { parseDotenv } from './dotenv.js';
import { connectionsFromEnvVars } from './env-vars.js';
import type { ProjectFiles } from './project-files.js';
import { asObject, asText, parseJsonText, SourceError } from './source-error.js';
import { connectionsFromVcap, type SourceYield } from './vcap.js';

/** What the chain reads with: the project root, trusted file access and the caller's extras. */
export interface SourceContext {
  readonly root: string;
  readonly files: Pick<ProjectFiles, 'read' | 'probe'>;
  /** `~/.hana-cli` of the daemon's user. */
  readonly hanaCliHome: string;
  /** A connection file named by a person (`hanactl mcp --conn-file`). */
  readonly connFile?: string;
  /** The caller's `VCAP_SERVICES` variable. */
  readonly vcapServices?: string;
  /** The caller's `HANA_CLI_*` target (never a password). */
  readonly hanaCli?: HanaCliEnv;
}

/** One source's own finding, before precedence decides used or skipped. */
export type SourceFinding =
  | { readonly kind: 'absent' | 'skipped' | 'error'; readonly file?: string; readonly reason: string; readonly stops?: boolean }
  | { readonly kind: 'found'; readonly file?: string; readonly found: SourceYield; readonly reason?: string };

export interface ProjectSource {
  /** How people see it in explanations: a file name or `VCAP_SERVICES`. */
  readonly label: string;
  find(ctx: SourceContext): SourceFinding;
}

type Json = { ok: true; value: unknown; file: string } | { ok: false; finding: SourceFinding };

/**
 * Reads and parses a JSON file inside trust; absence, trust and syntax problems become
 * findings. A file outside trust is skipped (with `hint`, when trusting its folder is sound).
 */
function readJson(ctx: SourceContext, path: string, label: string, hint = ''): Json {
  const read = ctx.files.read(path, label);
  if (read.kind === 'absent')
    return { ok: false, finding: { kind: 'absent', file: path, reason: `${label} does not exist (looked for ${path}).` } };
  if (read.kind === 'outside') return { ok: false, finding: { kind: 'skipped', file: path, reason: `${read.message}${hint}` } };
  if (read.kind === 'error') return { ok: false, finding: { kind: 'error', file: path, reason: read.message } };
  return { ok: true, value: parseJsonText(read.text, label), file: read.real };
}

/** The kinds package.json and .cdsrc.json declare, for a file that holds only credentials. */
function kindHint(ctx: SourceContext, files: readonly ('package.json' | '.cdsrc.json')[]): KindHint {
  const kinds = new Map<string | null, string>();
  for (const name of files) {
    try {
      const json = readJson(ctx, join(ctx.root, name), name);
      const section = json.ok ? (name === 'package.json' ? asObject(json.value)?.cds : json.value) : undefined;
      for (const e of capDbEntries(section)) if (e.kind && !kinds.has(e.profile)) kinds.set(e.profile, e.kind);
    } catch {
      // A broken file gives no hint; its own source reports it.
    }
  }
  return (profile) => kinds.get(profile);
}

function capSource(
  label: '.cdsrc-private.json' | '.cdsrc.json' | 'package.json',
  hints: readonly ('package.json' | '.cdsrc.json')[],
): ProjectSource {
  return {
    label,
    find(ctx) {
      const json = readJson(ctx, join(ctx.root, label), label);
      if (!json.ok) return json.finding;
      const section = label === 'package.json' ? asObject(json.value)?.cds : json.value;
      if (label === 'package.json' && section === undefined)
        return { kind: 'found', file: json.file, found: { candidates: [], notes: ['package.json has no cds section.'] } };
      const entries = capDbEntries(section);
      if (entries.length === 0)
        return { kind: 'found', file: json.file, found: { candidates: [], notes: [`${label} declares no cds.requires.db.`] } };
      const found = connectionsFromCap(entries, label, ctx.root, kindHint(ctx, hints));
      const reference = label === '.cdsrc-private.json' && found.candidates.length === 0 ? entries.find((e) => e.binding) : undefined;
      if (reference) return bindingOnly(ctx, json.file, reference);
      return { kind: 'found', file: json.file, found };
    },
  };
}

/**
 * A `.cdsrc-private.json` that holds only a binding reference (what `cds bind` writes): hana-cli
 * stops there with an error rather than fall through to another database, and so does hanactl.
 * The one exception is deliberate: the caller's `VCAP_SERVICES`, which `cds bind --exec` sets to
 * the resolved binding for the command it runs, is used as that binding's credentials.
 */
function bindingOnly(ctx: SourceContext, file: string, entry: Parameters<typeof bindingNote>[1]): SourceFinding {
  if (ctx.vcapServices !== undefined) {
    const found = connectionsFromVcap(ctx.vcapServices, 'VCAP_SERVICES (as `cds bind --exec` sets it)', ctx.root);
    if (found.candidates.length > 0) {
      const note = `.cdsrc-private.json holds only a binding reference; the caller's VCAP_SERVICES (as \`cds bind --exec\` sets it) resolves it.`;
      return { kind: 'found', file, found: { ...found, notes: [note, ...found.notes] } };
    }
  }
  const stop = 'hana-cli stops here too, so no later source is used: a person resolves the binding, or removes the file to use the others.';
  return { kind: 'error', file, stops: true, reason: `${bindingNote('.cdsrc-private.json', entry)} ${stop}` };
}

/** A default-env.json style file: `VCAP_SERVICES` (and hana-cli's `TARGET_CONTAINER`). */
function envJson(ctx: SourceContext, path: string, label: string, hint = ''): SourceFinding {
  const json = readJson(ctx, path, label, hint);
  if (!json.ok) return json.finding;
  const object = asObject(json.value);
  if (!object) throw new SourceError(`${label} is not a JSON object.`);
  if (object.VCAP_SERVICES === undefined)
    return { kind: 'found', file: json.file, found: { candidates: [], notes: [`${label} has no VCAP_SERVICES.`] } };
  return {
    kind: 'found',
    file: json.file,
    found: connectionsFromVcap(object.VCAP_SERVICES, label, ctx.root, asText(object.TARGET_CONTAINER)),
  };
}

const connFileSource: ProjectSource = {
  label: 'connection file',
  find(ctx) {
    if (!ctx.connFile) return { kind: 'absent', reason: `No connection file was named (\`${cliCommand()} mcp --conn-file <file>\`).` };
    const name = ctx.connFile;
    // As hana-cli's --conn: the project first, then ~/.hana-cli/<name>.
    const places = isAbsolute(name) ? [name] : [resolve(ctx.root, name), join(ctx.hanaCliHome, name)];
    for (const path of places) {
      const finding = envJson(ctx, path, `the connection file ${name}`);
      if (finding.kind !== 'absent') return finding;
    }
    return { kind: 'absent', reason: `The connection file ${name} does not exist (looked for ${places.join(' and ')}).` };
  },
};

const dotenvSource: ProjectSource = {
  label: '.env',
  find(ctx) {
    const path = join(ctx.root, '.env');
    const read = ctx.files.read(path, '.env');
    if (read.kind === 'absent') return { kind: 'absent', file: path, reason: `.env does not exist (looked for ${path}).` };
    if (read.kind !== 'file') return { kind: read.kind === 'outside' ? 'skipped' : 'error', file: path, reason: read.message };
    const found = connectionsFromEnvVars(parseDotenv(read.text), '.env', ctx.root);
    const notes = [...found.notes];
    if (found.candidates.length === 0 && found.notes.length === 0)
      notes.push('.env has no VCAP_SERVICES, HANA_* or DATABASE_URL variables.');
    return { kind: 'found', file: read.real, found: { ...found, notes } };
  },
};

/** hana-cli's own defaults for `HANA_CLI_PORT` and `HANA_CLI_DATABASE` (utils/connections.js). */
const HANA_CLI_PORT = 30013;
const HANA_CLI_DATABASE = 'SYSTEMDB';

/**
 * `HANA_CLI_HOST` (with `HANA_CLI_PORT`, `_USER`, `_DATABASE`, `_SCHEMA`) in the caller's
 * environment beats every file, as in hana-cli, with its defaults (port 30013, database
 * SYSTEMDB) — except that a HANA Cloud host without a port gets 443 with TLS and no database
 * name, by hanactl's one endpoint rule. The password never comes from an editor's environment.
 */
const hanaCliSource: ProjectSource = {
  label: 'HANA_CLI_* (environment)',
  find(ctx) {
    const env = ctx.hanaCli;
    if (!env?.host) return { kind: 'absent', reason: "The caller's environment has no HANA_CLI_HOST variable." };
    const given = env.port === undefined ? undefined : Number(env.port);
    if (given !== undefined && (!Number.isInteger(given) || given < 1 || given > 65535))
      throw new SourceError("HANA_CLI_PORT in the caller's environment is not a number from 1 to 65535.");
    const host = env.host;
    const cloud = hanaEndpointDefaults(host, undefined).port === 443;
    const endpoint = hanaEndpointDefaults(host, given ?? (cloud ? undefined : HANA_CLI_PORT));
    const database = env.database ?? (cloud ? undefined : HANA_CLI_DATABASE);
    const target = {
      engine: 'hana' as const,
      scheme: 'hana',
      host,
      port: endpoint.port,
      ...(env.user ? { user: env.user } : {}),
      ...(database ? { database } : {}),
      options: { ...(endpoint.encrypt ? { encrypt: 'true' } : {}), ...(env.schema ? { currentSchema: env.schema } : {}) },
    };
    const where = `${env.user ? `${env.user}@` : ''}${host}:${endpoint.port}${database ? `/${database}` : ''}`;
    const register =
      `hanactl never takes a password from an editor's environment${env.passwordSet ? ' (HANA_CLI_PASSWORD is ignored)' : ''}: ` +
      `a person registers it once with \`${cliCommand()} add <name> hana://${where}\` (it prompts for the password) and the editor uses \`--connection <name>\`.`;
    return {
      kind: 'found',
      found: {
        candidates: [makeCandidate({ name: 'hana-cli', target, detail: `HANA_CLI_HOST ${host}` }, undefined)],
        notes: [register],
      },
    };
  },
};

/** How many folders hana-cli looks in for a named file: the folder and its parents (getFileCheckParents). */
const HANA_CLI_FILE_DEPTH = 5;

/**
 * `HANA_CLI_CONN_FILE` in the caller's environment: a default-env.json style file hana-cli reads
 * right after `.cdsrc-private.json` and before `default-env.json`. As in hana-cli, a relative
 * name is looked for in the project folder, then in up to four folders above it, and the first
 * that exists is used; an absolute path is used as given. Nothing found: the chain goes on.
 */
const hanaCliConnFileSource: ProjectSource = {
  label: 'HANA_CLI_CONN_FILE (environment)',
  find(ctx) {
    const name = ctx.hanaCli?.connFile;
    if (!name) return { kind: 'absent', reason: "The caller's environment has no HANA_CLI_CONN_FILE variable." };
    const places: string[] = [];
    if (isAbsolute(name)) places.push(name);
    else
      for (let dir = ctx.root, i = 0; i < HANA_CLI_FILE_DEPTH; i++, dir = dirname(dir))
        if (!places.includes(join(dir, name))) places.push(join(dir, name));
    for (const path of places) {
      const finding = envJson(ctx, path, `HANA_CLI_CONN_FILE ${name}`, ` To use it, a person runs \`${cliCommand()} trust ${dirname(path)}\`.`);
      if (finding.kind !== 'absent') return finding;
    }
    return { kind: 'absent', reason: `HANA_CLI_CONN_FILE names ${name}, which does not exist (looked for ${places.join(', ')}).` };
  },
};

const environmentSource: ProjectSource = {
  label: 'VCAP_SERVICES',
  find(ctx) {
    if (ctx.vcapServices === undefined) return { kind: 'absent', reason: "The caller's environment has no VCAP_SERVICES variable." };
    return { kind: 'found', found: connectionsFromVcap(ctx.vcapServices, "the caller's environment", ctx.root) };
  },
};

/**
 * The chain, in hana-cli's order: `HANA_CLI_*` in the caller's environment beats every file, then CAP's own configuration: `.cdsrc-private.json`
 * (CAP bindings), the file `HANA_CLI_CONN_FILE` names (hana-cli reads it next), CAP's `cds.requires.db` (`.cdsrc.json`, `package.json`), `default-env.json`,
 * a named connection file, `~/.hana-cli/default.json`, `.env`, the caller's `VCAP_SERVICES`.
 * The first source that yields a connection wins.
 */
export const PROJECT_SOURCES: readonly ProjectSource[] = [
  hanaCliSource,
  capSource('.cdsrc-private.json', ['.cdsrc.json', 'package.json']),
  hanaCliConnFileSource,
  capSource('.cdsrc.json', ['package.json']),
  capSource('package.json', []),
  { label: 'default-env.json', find: (ctx) => envJson(ctx, join(ctx.root, 'default-env.json'), 'default-env.json') },
  connFileSource,
  {
    label: '~/.hana-cli/default.json',
    find: (ctx) =>
      envJson(
        ctx,
        join(ctx.hanaCliHome, 'default.json'),
        '~/.hana-cli/default.json',
        ` To use it, a person runs \`${cliCommand()} trust ${ctx.hanaCliHome}\`.`,
      ),
  },
  dotenvSource,
  environmentSource,
];
