import type { SourceReport } from '../../shared/project-schemas.js';
import { type Candidate, makeCandidate } from './candidate.js';
import { SourceError } from './source-error.js';
import { PROJECT_SOURCES, type ProjectSource, type SourceContext, type SourceFinding } from './sources.js';

/** The chain's answer: every source's report, and the connections of the first that matched. */
export interface Resolution {
  readonly sources: readonly SourceReport[];
  readonly used?: {
    readonly label: string;
    readonly file?: string;
    readonly candidates: readonly Candidate[];
    /** The connection to start with (bare name). */
    readonly preferred: string;
  };
}

/** Keeps file candidates (SQLite) whose file exists inside trust (read by its real path); notes the rest. */
function usable(ctx: SourceContext, candidates: readonly Candidate[], notes: string[]): Candidate[] {
  const kept: Candidate[] = [];
  for (const c of candidates) {
    if (!c.target.path) {
      kept.push(c);
      continue;
    }
    const probe = ctx.files.probe(c.target.path, `The SQLite file of ${c.detail}`);
    if (probe.kind === 'file') kept.push(makeCandidate({ ...c, target: { ...c.target, path: probe.real } }, c.password));
    else if (probe.kind === 'absent')
      notes.push(`${c.detail} points at ${c.target.path}, which does not exist yet (for CAP: \`cds deploy --to sqlite\`).`);
    else notes.push(probe.message);
  }
  return kept;
}

function find(source: ProjectSource, ctx: SourceContext): SourceFinding {
  try {
    return source.find(ctx);
  } catch (err) {
    // A SourceError names the file and the problem; anything else is reported without its text.
    return {
      kind: 'error',
      reason:
        err instanceof SourceError ? err.message : `${source.label} could not be read (unexpected ${(err as Error)?.name ?? 'error'}).`,
    };
  }
}

const listNames = (candidates: readonly Candidate[]): string => candidates.map((c) => `project:${c.name} (${c.target.engine})`).join(', ');

/**
 * Runs the sources in order, recording each: `used` (the first that yields a connection: first
 * match wins), `skipped` (present but yields nothing, or shadowed by an earlier match), `absent`
 * or `error` (a clear sentence naming the file). Later sources are still read, so a person can
 * see what an earlier one shadows. A broken source never stops the chain; the one that does is a
 * `.cdsrc-private.json` holding only a binding reference, as in hana-cli (`stops`).
 */
export function resolveSources(ctx: SourceContext, sources: readonly ProjectSource[] = PROJECT_SOURCES): Resolution {
  const reports: SourceReport[] = [];
  let used: Resolution['used'];
  let stoppedBy: string | undefined;
  for (const source of sources) {
    if (stoppedBy) {
      reports.push({ source: source.label, status: 'skipped', reason: `Not read: ${stoppedBy} stops the chain (as in hana-cli).` });
      continue;
    }
    const finding = find(source, ctx);
    const file = finding.file ? { file: finding.file } : {};
    if (finding.kind !== 'found') {
      reports.push({ source: source.label, ...file, status: finding.kind, reason: finding.reason });
      if (finding.kind === 'error' && finding.stops && !used) stoppedBy = source.label;
      continue;
    }
    const notes = [...finding.found.notes];
    const candidates = usable(ctx, finding.found.candidates, notes);
    const yields = candidates.map((c) => ({ name: `project:${c.name}`, engine: c.target.engine }));
    const extra = notes.length > 0 ? ` ${notes.join(' ')}` : '';
    if (candidates.length === 0) {
      reports.push({
        source: source.label,
        ...file,
        status: 'skipped',
        reason: notes.join(' ') || `${source.label} yields no connection.`,
      });
    } else if (used) {
      const reason = `Shadowed: ${used.label} came first and is used (first match wins); this source would yield ${listNames(candidates)}.${extra}`;
      reports.push({ source: source.label, ...file, status: 'skipped', reason, connections: yields });
    } else {
      const preferred = candidates.find((c) => c.name === finding.found.preferred)?.name ?? (candidates[0] as Candidate).name;
      used = { label: source.label, ...file, candidates, preferred };
      reports.push({
        source: source.label,
        ...file,
        status: 'used',
        reason: `Yields ${listNames(candidates)}; the first source that does, so it is used.${extra}`,
        connections: yields,
      });
    }
  }
  return { sources: reports, ...(used ? { used } : {}) };
}
