import type { ShimHandle } from '../../helpers/mcp-client.js';
import { textOf } from '../../helpers/mcp-client.js';

/** One tool call as a load loop saw it. */
export interface CallRecord {
  readonly lane: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly ok: boolean;
  /** The result's text (an isError result's message), or the protocol error's message. */
  readonly text: string;
  readonly connection: string;
}

/**
 * Runs tool calls from several shims in a loop until `stop()` is called; every call is recorded
 * with its start and end time (performance.now()), so a test can tell in-flight calls at a fault
 * from later ones. A call never runs past `callTimeoutMs` unnoticed: the SDK rejects it.
 */
export class ShimLoad {
  readonly records: CallRecord[] = [];
  #running = true;
  readonly #loops: Promise<void>[];

  constructor(
    shims: readonly ShimHandle[],
    pick: (lane: number, n: number) => { connection: string; sql: string },
    options: { callTimeoutMs?: number; pauseMs?: number } = {},
  ) {
    this.#loops = shims.map(async (shim, lane) => {
      for (let n = 0; this.#running; n++) {
        const { connection, sql } = pick(lane, n);
        const startedAt = performance.now();
        try {
          const result = await shim.client.callTool({ name: 'run_query', arguments: { sql, connection } }, undefined, {
            timeout: options.callTimeoutMs ?? 30_000,
          });
          const text = textOf(result as Parameters<typeof textOf>[0]);
          this.records.push({ lane, startedAt, endedAt: performance.now(), ok: !result.isError, text, connection });
        } catch (err) {
          this.records.push({
            lane,
            startedAt,
            endedAt: performance.now(),
            ok: false,
            text: `PROTOCOL: ${(err as Error).message}`,
            connection,
          });
        }
        if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
      }
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}

/**
 * The same loop on the daemon API: `call` runs one request and says how it ended. Used where the
 * test needs a per-call timeout (`DaemonClient.query({timeoutMs})`) the shim's tools do not offer.
 */
export class ApiLoad {
  readonly records: CallRecord[] = [];
  #running = true;
  readonly #loops: Promise<void>[];

  /** Calls that had not answered `hangMs` after they started (they are left pending; the lane goes on). */
  readonly hung: { lane: number; connection: string; startedAt: number }[] = [];

  constructor(
    lanes: number,
    pick: (lane: number, n: number) => { connection: string; run(): Promise<unknown> },
    options: { pauseMs?: number; hangMs?: number } = {},
  ) {
    this.#loops = Array.from({ length: lanes }, async (_, lane) => {
      for (let n = 0; this.#running; n++) {
        const { connection, run } = pick(lane, n);
        const startedAt = performance.now();
        try {
          let timer: NodeJS.Timeout | undefined;
          const hang = new Promise<never>((_, reject) => {
            timer = setTimeout(() => {
              this.hung.push({ lane, connection, startedAt });
              reject(Object.assign(new Error(`no answer within ${options.hangMs} ms`), { code: 'HUNG' }));
            }, options.hangMs ?? 60_000);
          });
          await Promise.race([run(), hang]).finally(() => clearTimeout(timer));
          this.records.push({ lane, startedAt, endedAt: performance.now(), ok: true, text: '', connection });
        } catch (err) {
          const e = err as { code?: string; message?: string };
          this.records.push({ lane, startedAt, endedAt: performance.now(), ok: false, text: `${e.code}: ${e.message}`, connection });
        }
        if (options.pauseMs) await new Promise((r) => setTimeout(r, options.pauseMs));
      }
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    await Promise.all(this.#loops);
  }
}
