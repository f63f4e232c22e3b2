import type { StatementReferences } from '../../policy/types.js';
import type { ResolveStage } from './postgres-resolve.js';

/** How many sets of names one connection remembers; past it, the oldest is forgotten. */
export const MAX_REMEMBERED_WALKS = 256;

/**
 * The sets of names (a statement's references) whose resolve step asked, on this connection, to
 * go further than the first check (postgres-resolve.ts), with the stage they reached: their next
 * calls start there rather than fail the earlier stages again. A hint only, never a verdict: it
 * chooses among checks that each run in the call's own transaction, each stage finds all an
 * earlier one would, and a stage that finds more asks for the next. A set kept after what it
 * names changed (the view replaced by a table) costs a later stage's time, never a check.
 */
export class WalkMemo {
  readonly #stages = new Map<string, ResolveStage>();

  /** The stage `references` reached before, else `first`. */
  stage(references: StatementReferences | undefined): ResolveStage {
    return (references && this.#stages.get(key(references))) ?? 'first';
  }

  /** Remembers that `references` asked for `stage`. */
  add(references: StatementReferences, stage: ResolveStage): void {
    const k = key(references);
    this.#stages.delete(k);
    this.#stages.set(k, stage);
    if (this.#stages.size > MAX_REMEMBERED_WALKS) this.#stages.delete(this.#stages.keys().next().value as string);
  }

  get size(): number {
    return this.#stages.size;
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
