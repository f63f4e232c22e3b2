import { resolve } from 'node:path';
import { type Candidate, makeCandidate } from './candidate.js';
import { bindingNote, type CapDbEntry, engineOfKind } from './cap-config.js';
import { type BoundTarget, hanaTarget } from './hana-binding.js';
import { postgresTarget } from './postgres-binding.js';
import { asText, SourceError } from './source-error.js';
import type { SourceYield } from './vcap.js';

/** The kind a lower-precedence CAP file declares for a profile (kind in package.json, credentials in .cdsrc-private.json). */
export type KindHint = (profile: string | null) => string | undefined;

function sqliteTarget(credentials: Record<string, unknown>, where: string, root: string): BoundTarget | undefined {
  const raw = asText(credentials.url) ?? asText(credentials.database);
  const url = raw?.replace(/^sqlite:(\/\/)?/i, '');
  if (!url || url === ':memory:') return undefined;
  if (url.includes('\0')) throw new SourceError(`${where} has a credentials.url with a NUL character.`);
  return { target: { engine: 'sqlite', scheme: 'sqlite', path: resolve(root, url), options: {} } };
}

/**
 * Connections from CAP's `cds.requires.db` in one file: SQLite (`credentials.url`, relative to
 * the project root), PostgreSQL and SAP HANA credentials. The default is named `db`, a profile's
 * `db-<profile>`. A db with only a cloud binding, only a kind, or an in-memory SQLite database
 * yields a note saying so plainly instead.
 */
export function connectionsFromCap(entries: readonly CapDbEntry[], file: string, root: string, kindHint: KindHint): SourceYield {
  const candidates: Candidate[] = [];
  const notes: string[] = [];
  for (const entry of entries) {
    const kind = entry.kind ?? kindHint(entry.profile) ?? kindHint(null);
    const engine = engineOfKind(kind, entry.profile);
    const where = `cds.requires.db${entry.profile ? ` [${entry.profile}]` : ''} in ${file}`;
    const name = entry.profile ? `db-${entry.profile}`.replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 64) : 'db';
    const credentials = entry.credentials && Object.keys(entry.credentials).length > 0 ? entry.credentials : undefined;
    const inMemory =
      `${where} is an in-memory SQLite database (no credentials.url): it lives only inside the running app. ` +
      'Give it a file (credentials.url, e.g. "db.sqlite") and run `cds deploy --to sqlite:db.sqlite`.';
    if (!engine) {
      notes.push(
        kind ? `${where} has kind "${kind}", which is not a database hanactl serves; ignored.` : `${where} names no kind; ignored.`,
      );
      continue;
    }
    if (!credentials) {
      if (entry.binding) notes.push(bindingNote(file, entry));
      else if (engine === 'sqlite') notes.push(inMemory);
      else
        notes.push(
          `${where} declares kind "${kind}" without credentials; they come from a binding (default-env.json, or .cdsrc-private.json through \`cds bind\`).`,
        );
      continue;
    }
    try {
      const bound =
        engine === 'sqlite'
          ? sqliteTarget(credentials, where, root)
          : engine === 'hana'
            ? hanaTarget(credentials, where)
            : postgresTarget(credentials, where, root);
      if (!bound) {
        notes.push(inMemory);
        continue;
      }
      candidates.push(
        makeCandidate(
          { name, target: bound.target, detail: `cds.requires.db${entry.profile ? ` [${entry.profile}]` : ''} (${kind})` },
          bound.password,
        ),
      );
    } catch (err) {
      if (!(err instanceof SourceError)) throw err;
      notes.push(err.message);
    }
  }
  return { candidates, ...(candidates[0] ? { preferred: candidates[0].name } : {}), notes };
}
