import type pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { FURTHER_MARKER, type ResolveStage, resolveRefusal, resolveStep } from '../../daemon/engines/postgres/postgres-resolve.js';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { type ScratchPgDatabase, scratchPgDatabase } from './engines.js';

/** A scratch database for the suite around the call, and the resolve step's answers on it. */
export interface ResolveScratch {
  /** The client on the scratch database (once the suite's set-up ran). */
  db(): pg.Client;
  /** What the step at `stage` answers: `nothing` found, `further`, or the refusal's message. */
  answer(references: StatementReferences, stage: ResolveStage): Promise<string>;
}

/** Creates database `name` with `objects` before the suite around the call, and drops it after. */
export function resolveScratch(name: string, objects: readonly string[]): ResolveScratch {
  let scratch: ScratchPgDatabase | undefined;
  beforeAll(async () => {
    scratch = await scratchPgDatabase(name, objects);
    // As the daemon sends the step: compiling the walk's plan costs far more than running it.
    await scratch.db.query('SET jit = off');
  });
  afterAll(async () => {
    await scratch?.drop();
  });
  const db = (): pg.Client => {
    if (!scratch) throw new Error(`the scratch database ${name} was not created`);
    return scratch.db;
  };
  return {
    db,
    async answer(references, stage) {
      const step = resolveStep(references, stage);
      if (!step) throw new Error('no step');
      try {
        await db().query(step.text, step.values as string[]);
        return 'nothing';
      } catch (err) {
        const message = (err as Error).message;
        if (message.includes(FURTHER_MARKER)) return 'further';
        return resolveRefusal(message)?.message ?? message;
      }
    },
  };
}
