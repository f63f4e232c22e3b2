import { type RowBudget, rowBudget } from '../row-bytes.js';
import type { PgField } from './postgres-types.js';

/** One statement of a batch: parsed, bound and executed in the unnamed statement and portal. */
export interface BatchStep {
  readonly text: string;
  /** Bound parameters, already in wire form (`pg`'s prepareValue). */
  readonly values?: readonly (string | Buffer | null)[];
  /**
   * The step whose rows are the call's answer: described, and executed for at most `maxRows`
   * rows; once the rows kept reach `maxBytes` (row-bytes.ts), later ones are dropped unread.
   */
  readonly answer?: { readonly maxRows: number; readonly maxBytes?: number };
  /** Only the first row of a step that is not the answer is wanted: executed for one row. */
  readonly firstRowOnly?: boolean;
}

/** What a batch answered: the answer step's fields, rows and command tag, and each other step's first row (raw text). */
export interface BatchResult {
  readonly fields: PgField[];
  readonly rows: unknown[][];
  readonly rowCount: number | null;
  readonly command: string | null;
  readonly firstRows: ReadonlyMap<number, readonly (string | null)[]>;
  /** Rows of the answer were dropped past its `maxBytes`. */
  readonly cut?: boolean;
}

/**
 * A batch sent in two parts: the steps up to and including `step`, then a Flush; once `step`
 * completes, `decide` gets its first row (raw text) and returns the steps after it, which are
 * sent with the Sync. The same transaction holds throughout; it costs one more round trip.
 */
export interface BatchGate {
  readonly step: number;
  decide(firstRow: readonly (string | null)[] | undefined): readonly BatchStep[];
}

/** A step failed; the server skipped every step after it up to the Sync. */
export class BatchStepError extends Error {
  readonly step: number;
  readonly error: unknown;
  /** What the steps before it answered. */
  readonly partial: BatchResult;
  constructor(step: number, error: unknown, partial: BatchResult) {
    super(error instanceof Error ? error.message : String(error));
    this.step = step;
    this.error = error;
    this.partial = partial;
  }
}

/** The slice of pg's wire connection a batch writes with. */
export interface PgWire {
  parse(query: { text: string }): void;
  bind(config: { values: readonly (string | Buffer | null)[] }): void;
  describe(msg: { type: 'P'; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
  flush(): void;
  sync(): void;
}

/** pg's Result, which turns an answer's DataRows into typed values. */
export interface PgRowParser {
  fields: PgField[];
  command: string | null;
  rowCount: number | null;
  addFields(fields: unknown[]): void;
  addCommandComplete(msg: unknown): void;
  parseRow(raw: unknown[]): unknown[];
}

/**
 * Several statements in one round trip: every step's Parse/Bind/Execute, then one Sync, written
 * at once (pg's Client runs it as a custom query, as pg-cursor does). The extended protocol
 * runs them in order, and after an error the server skips everything up to the Sync — so when
 * `BEGIN READ ONLY` or the setting of a context value fails, the statement after it never runs,
 * let alone outside its transaction. Settles on ReadyForQuery, or rejects with the failing step.
 */
export class PgBatch {
  readonly done: Promise<BatchResult>;
  #steps: readonly BatchStep[];
  readonly #parser: PgRowParser;
  readonly #gate: BatchGate | undefined;
  /** The wire while the gate waits: the rest of the batch (and its Sync) is still to be written. */
  #waiting: PgWire | undefined;
  readonly #rows: unknown[][] = [];
  readonly #firstRows = new Map<number, (string | null)[]>();
  #budget: RowBudget | undefined;
  #cut = false;
  #step = 0;
  #settled = false;
  #resolve!: (result: BatchResult) => void;
  #reject!: (err: BatchStepError) => void;

  readonly #onCut: (() => void) | undefined;

  /** `onCut` runs once, when the answer's first row past its `maxBytes` arrives (to cancel the rest on the server). */
  constructor(steps: readonly BatchStep[], parser: PgRowParser, gate?: BatchGate, onCut?: () => void) {
    this.#steps = gate ? steps.slice(0, gate.step + 1) : steps;
    this.#onCut = onCut;
    this.#parser = parser;
    this.#gate = gate;
    this.done = new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  /** Called by pg's Client when the connection is free: writes the whole batch (one write once corked). */
  submit(wire: PgWire): void {
    this.#write(wire, this.#steps);
    if (this.#gate) {
      this.#waiting = wire;
      wire.flush();
    } else wire.sync();
  }

  #write(wire: PgWire, steps: readonly BatchStep[]): void {
    for (const step of steps) {
      wire.parse({ text: step.text });
      wire.bind({ values: step.values ?? [] });
      if (step.answer) wire.describe({ type: 'P', name: '' });
      wire.execute({ portal: '', rows: step.answer ? step.answer.maxRows : step.firstRowOnly ? 1 : 0 });
    }
  }

  /**
   * The gate step completed: write the steps its answer decided on, and the Sync. A decision that
   * throws sends only the Sync and fails the batch at the gate step; the caller ends the
   * transaction as after any failed step.
   */
  #open(wire: PgWire): boolean {
    this.#waiting = undefined;
    let rest: readonly BatchStep[];
    try {
      rest = (this.#gate as BatchGate).decide(this.#firstRows.get(this.#step));
    } catch (err) {
      wire.sync();
      this.handleError(err);
      return false;
    }
    this.#steps = [...this.#steps, ...rest];
    this.#write(wire, rest);
    wire.sync();
    return true;
  }

  get #current(): BatchStep | undefined {
    return this.#steps[this.#step];
  }

  handleRowDescription(msg: { fields: unknown[] }): void {
    if (this.#current?.answer) this.#parser.addFields(msg.fields);
  }

  handleDataRow(msg: { fields: unknown[] }): void {
    const answer = this.#current?.answer;
    if (answer) {
      // Past the byte cap a row is neither parsed nor kept: memory stays at what can be shown.
      this.#budget ??= rowBudget(answer.maxBytes);
      if (this.#budget?.full) {
        if (!this.#cut) this.#onCut?.();
        this.#cut = true;
      } else {
        this.#budget?.add(msg.fields);
        this.#rows.push(this.#parser.parseRow(msg.fields));
      }
    } else if (!this.#firstRows.has(this.#step)) this.#firstRows.set(this.#step, msg.fields as (string | null)[]);
  }

  handleCommandComplete(msg: unknown): void {
    if (this.#current?.answer) this.#parser.addCommandComplete(msg);
    this.#stepDone();
  }

  handlePortalSuspended(): void {
    this.#stepDone();
  }

  #stepDone(): void {
    if (this.#waiting && this.#step === this.#gate?.step && !this.#open(this.#waiting)) return;
    this.#step++;
  }

  handleEmptyQuery(): void {
    this.#step++;
  }

  /** COPY has no place in a batch: the next step's message ends it with an error. */
  handleCopyInResponse(): void {}
  handleCopyData(): void {}

  handleError(err: unknown): void {
    // Failed before the gate opened: the server skips up to a Sync, which is not written yet.
    const waiting = this.#waiting;
    this.#waiting = undefined;
    waiting?.sync();
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(new BatchStepError(this.#step, err, this.#result()));
  }

  handleReadyForQuery(): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve(this.#result());
  }

  /** What the batch answered so far (the rows kept of a call cut at the result cap, whatever ended it). */
  get partial(): BatchResult {
    return this.#result();
  }

  #result(): BatchResult {
    const p = this.#parser;
    return { fields: p.fields, rows: this.#rows, rowCount: p.rowCount, command: p.command, firstRows: this.#firstRows, cut: this.#cut };
  }
}
