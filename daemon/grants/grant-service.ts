import type { GrantChange, GrantInfo, GrantRequest } from '../../shared/grant-schemas.js';
import type { GrantRow } from '../registry/registry.js';

/** What the service needs from the registry. */
export interface GrantStore {
  listGrants(): GrantRow[];
  addGrant(row: GrantRow): boolean;
  removeGrant(connection: string, principal: string): boolean;
}

/** Who a signed-in caller is, as far as grants go. */
export interface GrantSubject {
  readonly subject: string;
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Every signed-in caller. */
export const EVERYONE = '*';

/** The principals a caller matches: `*`, its subject, and each string of its `groups` and `roles` claims. */
export function principalsOf(caller: GrantSubject): Set<string> {
  const found = new Set([EVERYONE, caller.subject]);
  for (const claim of ['groups', 'roles']) {
    const value = caller.claims[claim];
    for (const item of Array.isArray(value) ? value : []) if (typeof item === 'string') found.add(item);
  }
  return found;
}

/**
 * Which connections signed-in callers of MCP over HTTP may use: no grant, no access. A grant
 * names a connection and a principal (a subject, a group or role, or `*`). Read on every
 * request, so a revoke takes effect on the next one.
 */
export class GrantService {
  readonly #store: GrantStore;
  readonly #assertConnection: (name: string) => void;
  readonly #now: () => Date;

  constructor(store: GrantStore, options: { assertConnection: (name: string) => void; now?: () => Date }) {
    this.#store = store;
    this.#assertConnection = options.assertConnection;
    this.#now = options.now ?? (() => new Date());
  }

  grant(request: GrantRequest): GrantChange {
    this.#assertConnection(request.connection);
    const changed = this.#store.addGrant({ ...request, created_at: this.#now().toISOString() });
    return { ...request, changed };
  }

  revoke(request: GrantRequest): GrantChange {
    return { ...request, changed: this.#store.removeGrant(request.connection, request.principal) };
  }

  list(): GrantInfo[] {
    return this.#store.listGrants().map((g) => ({ connection: g.connection, principal: g.principal, createdAt: g.created_at }));
  }

  /** True when a grant of the connection names one of the caller's principals. */
  allows(connection: string, caller: GrantSubject): boolean {
    const principals = principalsOf(caller);
    return this.#store.listGrants().some((g) => g.connection === connection && principals.has(g.principal));
  }
}
