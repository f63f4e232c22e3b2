// Loaded with `node --import` before the MCP conformance suite's CLI, on Node 20 only: the
// suite (0.1.16) imports `globSync` from node:fs, which Node 22 added. Its server runner
// never calls it (only `tier-check` reads result folders); this makes the import resolve.
import { register } from 'node:module';

register('./resolve-fs.mjs', import.meta.url);
