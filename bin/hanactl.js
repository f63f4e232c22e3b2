#!/usr/bin/env node
// Thin entry: everything lives in the compiled CLI. `npm install` builds it (prepare).
// CommonJS (bin/package.json), so libuv's thread pool is sized before anything uses it: Node
// sizes the pool once, at its first use, and by the time an ES module entry runs that has happened.
'use strict';
require('./thread-pool.cjs').sizeThreadPool(process.env);
import('../dist/cli/main.js').then(({ main }) => main(process.argv.slice(2)));
