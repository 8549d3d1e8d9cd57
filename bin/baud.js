#!/usr/bin/env -S node --max-semi-space-size=8
// The installed `baud` command: runs the compiled CLI (built by `npm install` via `prepare`).
//
// --max-semi-space-size=8: V8's young generation may grow to 2 × 16 MiB and start-up (schema
// compilation) grows it there at once, where it stays; at 8 MiB a serving node idles at
// ~105 MiB instead of ~121 MiB, with the same CPU per request and the same import rate
// (measured; docs/PERFORMANCE.md). At 4 MiB requests cost a fifth more CPU.
import '../dist/main.js';
