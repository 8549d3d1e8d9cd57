import v8 from 'node:v8';

/**
 * How far a serving node's old generation may grow past what the last full collection kept
 * before V8 collects it again: by three quarters. V8's own factor, for a heap of a node's
 * size, let it more than double.
 *
 * Why: a reader walking an area leaves garbage in the old generation (answers and rows that
 * outlived two young collections, and what V8 allocated there directly), about 50 MB per
 * 1,000,000 messages walked, and it stays resident until the next full collection. With V8's
 * factor that came at ~85 MB of old space over ~40 MB live, so the node's RSS after a walk
 * depended on where in that cycle the walk ended (166–208 MiB in full bench runs). Measured
 * (docs/PERFORMANCE.md, memory after a crawl): at 75% a walk of 1,000,000 messages ends at
 * ~180 MiB and page 1 under 50 connections serves as many requests as with V8's factor; at 50%
 * the walk ends at ~172 MiB but page 1 lost 8–13% to the extra full collections. Set at run
 * time rather than on the command line so that every way of starting a node (`npm start`,
 * `baud serve`, `node dist/main.js`) gets it; V8 reads it at each collection.
 */
const HEAP_GROWING_PERCENT = 75;

export function boundHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
