import type { Target } from '../../shared/connection-url.js';
import { trimWhere } from '../../shared/linear-text.js';

/**
 * A connection one source yields, before it becomes a `project:<name>` record. `password`
 * is non-enumerable, as on registry records, so a candidate never serialises or logs it.
 */
export interface Candidate {
  /** Without the `project:` prefix. */
  readonly name: string;
  readonly target: Target;
  readonly password?: string;
  /** Where in the source it came from, e.g. `hana binding "my-hdi"`; no secret. */
  readonly detail: string;
}

/** Builds a candidate whose password cannot be enumerated. */
export function makeCandidate(fields: Omit<Candidate, 'password'>, password: string | undefined): Candidate {
  const candidate = { ...fields };
  Object.defineProperty(candidate, 'password', { value: password, enumerable: false });
  return candidate as Candidate;
}

/** A connection name from a binding or service name: letters, digits, - and _, up to 64. */
export function toConnectionName(raw: string | undefined, fallback: string): string {
  // trimWhere, not /^-+|-+$/g, which is quadratic on a long run of dashes.
  const cleaned = trimWhere((raw ?? '').replace(/[^A-Za-z0-9_-]+/g, '-'), (ch) => ch === '-').slice(0, 64);
  return cleaned || fallback;
}

/** Renames repeated names `name-2`, `name-3`... so every candidate of a source is reachable. */
export function uniqueNames(candidates: readonly Candidate[]): Candidate[] {
  const seen = new Set<string>();
  return candidates.map((c) => {
    let name = c.name;
    for (let i = 2; seen.has(name); i++) name = `${c.name.slice(0, 60)}-${i}`;
    seen.add(name);
    return name === c.name ? c : makeCandidate({ ...c, name }, c.password);
  });
}
