import v8 from 'node:v8';

/**
 * How far a serving node's old generation may grow past what the last full collection kept
 * before V8 collects it again: by half. V8's own factor, for a heap of a node's size, lets it
 * double and more.
 *
 * Why: a reader walking an area leaves garbage in the old generation (answers and rows that
 * outlived two young collections), about 50 MB per 1,000,000 messages walked, and it stays
 * resident until the next full collection. With V8's factor that came at ~85 MB of old space
 * over ~40 MB live, so the node's RSS after a walk depended on where in that cycle the walk
 * ended (166–208 MiB in full bench runs); at 50% a walk of 1,000,000 messages ends at ~173 MiB
 * with two or three more full collections of 5–20 ms each (docs/PERFORMANCE.md, memory after a
 * crawl). Set at run time rather than on the command line so that every way of starting a node
 * (`npm start`, `baud serve`, `node dist/main.js`) gets it; V8 reads it at each collection.
 */
const HEAP_GROWING_PERCENT = 50;

export function boundHeapGrowth(): void {
  v8.setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
