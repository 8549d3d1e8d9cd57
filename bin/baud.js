#!/usr/bin/env node
// The installed `baud` command: runs the compiled CLI (built by `npm install` via `prepare`).
import '../dist/main.js';
