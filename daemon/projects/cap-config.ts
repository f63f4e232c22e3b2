import { cliCommand } from '../../shared/cli-command.js';
import { asObject, asText } from './source-error.js';

/** CAP's `requires.db` for one profile (null: the default, with `[development]` laid over it). */
export interface CapDbEntry {
  readonly profile: string | null;
  readonly kind?: string;
  readonly credentials?: Record<string, unknown>;
  readonly binding?: Record<string, unknown>;
}

const PROFILE = /^\[(.+)\]$/;

/** `"db": "sqlite"` is short for `{kind: "sqlite"}`; profile keys (`[hybrid]`) are split off. */
function plain(value: unknown): { fields: Record<string, unknown>; profiles: Map<string, unknown> } {
  const fields: Record<string, unknown> = {};
  const profiles = new Map<string, unknown>();
  if (typeof value === 'string') fields.kind = value;
  for (const [key, v] of Object.entries(asObject(value) ?? {})) {
    const profile = PROFILE.exec(key)?.[1];
    if (profile) profiles.set(profile, v);
    else fields[key] = v;
  }
  return { fields, profiles };
}

/** Lays CAP configuration objects over one another (credentials merged, the rest replaced). */
function overlay(layers: readonly Record<string, unknown>[]): Omit<CapDbEntry, 'profile'> {
  let kind: string | undefined;
  let credentials: Record<string, unknown> | undefined;
  let binding: Record<string, unknown> | undefined;
  for (const layer of layers) {
    kind = asText(layer.kind) ?? kind;
    const c = asObject(layer.credentials);
    if (c) credentials = { ...credentials, ...c };
    binding = asObject(layer.binding) ?? binding;
  }
  return { ...(kind ? { kind } : {}), ...(credentials ? { credentials } : {}), ...(binding ? { binding } : {}) };
}

/**
 * The `requires.db` entries of one CAP configuration (`package.json`'s `cds`, `.cdsrc.json`,
 * `.cdsrc-private.json`): the default first (development, as `cds watch` runs), then each
 * profile that says something about `db` (`[hybrid]`, `[production]`...), in file order.
 * Both `requires.db["[p]"]` and `requires["[p]"].db` are read, as CAP does.
 */
export function capDbEntries(section: unknown): CapDbEntry[] {
  const requires = plain(asObject(section)?.requires);
  const db = plain(requires.fields.db);
  const layersFor = (profile: string): Record<string, unknown>[] => {
    const layers: Record<string, unknown>[] = [];
    if (db.profiles.has(profile)) layers.push(plain(db.profiles.get(profile)).fields);
    const outer = asObject(requires.profiles.get(profile));
    if (outer && outer.db !== undefined) layers.push(plain(outer.db).fields);
    return layers;
  };
  const entries: CapDbEntry[] = [];
  const base = overlay([db.fields, ...layersFor('development')]);
  if (Object.keys(base).length > 0) entries.push({ profile: null, ...base });
  const profiles = new Set([...db.profiles.keys(), ...requires.profiles.keys()]);
  for (const profile of profiles) {
    if (profile === 'development') continue;
    const own = layersFor(profile);
    if (own.length > 0) entries.push({ profile, ...overlay([db.fields, ...own]) });
  }
  return entries;
}

/** The engine a CAP `kind` means (`sql` is SQLite, except in production). */
export function engineOfKind(kind: string | undefined, profile: string | null): 'sqlite' | 'hana' | 'postgres' | undefined {
  switch ((kind ?? '').toLowerCase()) {
    case 'sqlite':
    case 'better-sqlite':
    case 'legacy-sqlite':
      return 'sqlite';
    case 'sql':
      return profile === 'production' ? 'hana' : 'sqlite';
    case 'hana':
    case 'hana-cloud':
    case 'hana-mt':
    case 'legacy-hana':
      return 'hana';
    case 'postgres':
    case 'postgresql':
    case 'legacy-postgres':
      return 'postgres';
    default:
      return undefined;
  }
}

/**
 * The plain sentence for a db that holds only a cloud binding reference: which instance and
 * key (names, no secret), and the `cds` command a person runs to resolve it.
 */
export function bindingNote(file: string, entry: CapDbEntry): string {
  const b = entry.binding ?? {};
  const instance = asText(b.instance) ?? asText(b.name);
  const key = asText(b.key);
  const type = asText(b.type) ?? 'cloud';
  const where = `cds.requires.db${entry.profile ? ` in profile ${entry.profile}` : ''}`;
  const what = `${type} service instance${instance ? ` "${instance}"` : ''}${key ? ` with key "${key}"` : ''}`;
  const profile = entry.profile ? ` --profile ${entry.profile}` : '';
  return (
    `${file} holds only a cloud binding reference for ${where} (${what}), not credentials; hanactl does not log in to the cloud to resolve it. ` +
    `A person resolves it with \`cds bind --exec${profile} -- <command>\` (or re-binds with \`cds bind db --to <instance>\`), ` +
    `then registers the credentials with \`${cliCommand()} add\` or writes them to default-env.json.`
  );
}
