import type { StatementReferences } from '../../policy/types.js';

/** How many sets of names one connection remembers; past it, the oldest is forgotten. */
export const MAX_REMEMBERED_WALKS = 256;

/**
 * The sets of names (a statement's references) whose first check asked, on this connection, for
 * the full walk (postgres-resolve.ts): their next calls send the walk at once rather than fail
 * the first check again. A hint only, never a verdict: it chooses between two checks that each
 * run in the call's own transaction, and the walk finds all the first check would. A set kept
 * after what it names changed (the view replaced by a table) costs the walk's time, never a check.
 */
export class WalkMemo {
  readonly #keys = new Set<string>();

  /** True when `references` asked for the walk before. */
  has(references: StatementReferences | undefined): boolean {
    return references !== undefined && this.#keys.has(key(references));
  }

  /** Remembers that `references` asked for the walk. */
  add(references: StatementReferences): void {
    const k = key(references);
    this.#keys.delete(k);
    this.#keys.add(k);
    if (this.#keys.size > MAX_REMEMBERED_WALKS) this.#keys.delete(this.#keys.values().next().value as string);
  }

  get size(): number {
    return this.#keys.size;
  }
}

function key(references: StatementReferences): string {
  return JSON.stringify([
    references.relations,
    references.written,
    references.functions,
    references.operators,
    references.types,
    references.attributes,
  ]);
}
