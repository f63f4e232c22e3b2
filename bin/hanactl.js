#!/usr/bin/env node
// Thin entry: everything lives in the compiled CLI. `npm install` builds it (prepare).
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2));
