import { createRequire } from 'node:module';

/** The parts of libpg-query's Emscripten module (libpg-query/wasm/libpg-query.js) used here. */
interface PgQueryWasm {
  /** The module's memory; replaced when it grows, so read it after every call that may allocate. */
  readonly HEAPU8: Uint8Array;
  readonly HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(pointer: number): void;
  /** Parses a NUL-terminated UTF-8 text; returns a `{char *tree; char *stderr; PgQueryError *error}` struct. */
  _wasm_parse_query_raw(query: number): number;
  _wasm_free_parse_result(result: number): void;
}

const load = createRequire(import.meta.url)('libpg-query/wasm/libpg-query.js') as () => Promise<PgQueryWasm>;

/** What the parser made of a text: its tree as JSON text, the grammar's error, or that the parser itself failed. */
export type RawParse =
  | { readonly ok: true; readonly json: string }
  | { readonly ok: false; readonly failure: 'syntax' | 'broken' | 'restarting'; readonly message: string };

// Loaded once, when the daemon first imports the policy, so that every parse after that is synchronous.
let wasm: PgQueryWasm | undefined = await load();
let restarting: Promise<void> | undefined;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A NUL-terminated UTF-8 string at `pointer`, decoded natively (the module's own decoder is a JS loop). */
function stringAt(module: PgQueryWasm, pointer: number): string {
  const heap = module.HEAPU8;
  const end = heap.indexOf(0, pointer);
  return decoder.decode(heap.subarray(pointer, end < 0 ? heap.length : end));
}

/**
 * A fresh copy of the parser, loaded in the background. A parse that throws out of the WebAssembly
 * (its stack ran out on a deeply nested tree, or it trapped) leaves the module's C state (the error
 * handler's jump buffer, memory contexts) pointing into frames that are gone, and later parses were
 * seen to fail or trap at random: such a module is never called again.
 */
function restart(): void {
  wasm = undefined;
  restarting ??= load().then(
    (fresh) => {
      wasm = fresh;
      restarting = undefined;
    },
    () => {
      restarting = undefined;
    },
  );
}

/** Resolves when the parser is ready (at once, unless it is being restarted after a failure). */
export function parserReady(): Promise<void> {
  return restarting ?? Promise.resolve();
}

/**
 * Parses `sql` with PostgreSQL's parser (libpg-query). Never throws. The text is encoded as the
 * server receives it from the driver (UTF-8, a lone surrogate as U+FFFD), and the tree is read back
 * without the module's per-byte JavaScript loops, which cost as much as the parse on long texts.
 */
export function parseRaw(sql: string): RawParse {
  const module = wasm;
  if (!module) {
    if (!restarting) restart();
    return { ok: false, failure: 'restarting', message: "PostgreSQL's parser is restarting" };
  }
  const size = sql.length * 3 + 1;
  let query = 0;
  let result = 0;
  try {
    query = module._malloc(size);
    if (!query) return { ok: false, failure: 'broken', message: 'out of memory' };
    const { written } = encoder.encodeInto(sql, module.HEAPU8.subarray(query, query + size - 1));
    module.HEAPU8[query + written] = 0;
    result = module._wasm_parse_query_raw(query);
    if (!result) return { ok: false, failure: 'broken', message: 'out of memory' };
    const words = module.HEAPU32;
    const tree = words[result >>> 2] ?? 0;
    const error = words[(result + 8) >>> 2] ?? 0;
    if (error) {
      const message = words[error >>> 2] ?? 0;
      return { ok: false, failure: 'syntax', message: message ? stringAt(module, message) : 'unknown error' };
    }
    return tree ? { ok: true, json: stringAt(module, tree) } : { ok: false, failure: 'syntax', message: 'no parse tree' };
  } catch (err) {
    restart();
    return { ok: false, failure: 'broken', message: err instanceof Error ? err.message : String(err) };
  } finally {
    if (wasm === module) {
      if (result) module._wasm_free_parse_result(result);
      if (query) module._free(query);
    }
  }
}
