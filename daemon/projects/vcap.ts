import type { Engine } from '../../shared/connection-url.js';
import { type Candidate, makeCandidate, toConnectionName, uniqueNames } from './candidate.js';
import { hanaTarget } from './hana-binding.js';
import { postgresTarget } from './postgres-binding.js';
import { asObject, asText, parseJsonText, SourceError } from './source-error.js';

/** What one source holds: its connections, its preferred one, and notes on what it ignored. */
export interface SourceYield {
  readonly candidates: readonly Candidate[];
  /** The name to prefer (e.g. hana-cli's `TARGET_CONTAINER`); else the first. */
  readonly preferred?: string;
  readonly notes: readonly string[];
}

const HANA_SERVICES = new Set(['hana', 'hanatrial', 'hana-cloud', 'hana-db']);
const POSTGRES_SERVICES = new Set(['postgresql', 'postgresql-db', 'postgres', 'postgresql-hyperscaler']);

/** The engine a VCAP binding is for, by its service key, label or tags; undefined when not a database hanactl serves. */
function engineOf(service: string, binding: Record<string, unknown>): Engine | undefined {
  const label = (asText(binding.label) ?? service).toLowerCase();
  const tags = Array.isArray(binding.tags)
    ? binding.tags.filter((t): t is string => typeof t === 'string').map((t) => t.toLowerCase())
    : [];
  if (HANA_SERVICES.has(service.toLowerCase()) || HANA_SERVICES.has(label) || tags.includes('hana')) return 'hana';
  if (
    POSTGRES_SERVICES.has(service.toLowerCase()) ||
    POSTGRES_SERVICES.has(label) ||
    tags.includes('postgresql') ||
    tags.includes('postgres')
  ) {
    return 'postgres';
  }
  return undefined;
}

/** One binding as a candidate, or the note that says why it is ignored. */
function fromBinding(service: string, item: unknown, i: number, where: string, root: string): Candidate | string {
  const binding = asObject(item);
  if (!binding) return `VCAP_SERVICES.${service}[${i}] in ${where} is not an object; ignored.`;
  const label = `the ${service} binding ${asText(binding.name) ? `"${asText(binding.name)}"` : `#${i + 1}`} in ${where}`;
  const engine = engineOf(service, binding);
  if (!engine) return `${label} is not a database hanactl serves (hana, hanatrial, postgresql); ignored.`;
  const credentials = asObject(binding.credentials);
  if (!credentials || Object.keys(credentials).length === 0) return `${label} has no credentials; ignored.`;
  try {
    const bound = engine === 'hana' ? hanaTarget(credentials, label) : postgresTarget(credentials, label, root);
    const name = toConnectionName(asText(binding.name) ?? asText(binding.instance_name), `${service}-${i + 1}`);
    return makeCandidate({ name, target: bound.target, detail: `${service} binding "${name}"` }, bound.password);
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    return `${err.message} Ignored.`;
  }
}

/**
 * Reads a `VCAP_SERVICES` value (an object, or JSON text as in `.env` and the environment):
 * each `hana`, `hanatrial` or `postgresql` binding with credentials becomes a connection named
 * after the binding. Bindings of other services, or without credentials, are noted and
 * skipped; a value of the wrong shape is a SourceError. `where` names it in every message.
 */
export function connectionsFromVcap(value: unknown, where: string, root: string, preferred?: string): SourceYield {
  const vcap = asObject(typeof value === 'string' ? parseJsonText(value, `VCAP_SERVICES in ${where}`) : value);
  if (!vcap) throw new SourceError(`VCAP_SERVICES in ${where} is not an object of service bindings.`);
  const candidates: Candidate[] = [];
  const notes: string[] = [];
  for (const [service, list] of Object.entries(vcap)) {
    if (!Array.isArray(list)) {
      notes.push(`VCAP_SERVICES.${service} in ${where} is not a list of bindings; ignored.`);
      continue;
    }
    list.forEach((item, i) => {
      const found = fromBinding(service, item, i, where, root);
      if (typeof found === 'string') notes.push(found);
      else candidates.push(found);
    });
  }
  const named = uniqueNames(candidates);
  const wanted = preferred ? toConnectionName(preferred, '') : '';
  const chosen = named.find((c) => c.name === wanted) ?? named.find((c) => c.target.engine === 'hana') ?? named[0];
  return { candidates: named, ...(chosen ? { preferred: chosen.name } : {}), notes };
}
