/**
 * What V8 spends on a value in 64-bit Node, roughly: the figures the caches' byte budgets count
 * with (see `RecentCache`). An estimate, not a measurement — a heap snapshot would be exact but
 * costs far more than the read it would account for — and on the high side where it is
 * unsure: a string shared by two objects is counted twice, a small integer (stored inside its
 * slot) as a heap number, every object as a dictionary. Checked against what
 * `process.memoryUsage().heapUsed` grew by (after a full GC) while a node remembered what it
 * read: a message row 1.25 KB counted against 1.3–1.55 KB grown, a 100-message page with its
 * stripped copy and serialised answer 116 KB counted against 110 KB grown.
 */
const SLOT = 8;
/** An object's header: its map, its properties and its elements pointers. */
const OBJECT_HEADER = 24;
/**
 * A property as a dictionary-mode object keeps it (key, value and details): rows come from the
 * database drivers in that mode, and counting every object so errs on the high side.
 */
const PROPERTY = 3 * SLOT;
/** A string's header: map, hash and length; the characters follow, one byte each or two. */
const STRING_HEADER = 16;
/** A heap number or a Date's time value beside its header. */
const BOXED_NUMBER = 16;
/** A Map or Set: its header and hash table, plus per entry the table's key, value and chain slots. */
const COLLECTION_HEADER = 64;
const COLLECTION_ENTRY = 3 * SLOT;

/** Bytes of a string: one a character while every character is ASCII, else two (V8's two-byte strings). */
export function estimatedStringBytes(text: string): number {
  const perCharacter = Buffer.byteLength(text, 'utf8') === text.length ? 1 : 2;
  return STRING_HEADER + text.length * perCharacter;
}

/**
 * Bytes `value` holds, following its properties, array items and Map and Set entries. An
 * object reached twice is counted once; property names are not counted (objects of one shape
 * share them).
 */
export function estimatedBytes(value: unknown): number {
  const seen = new Set<object>();
  const measure = (item: unknown): number => {
    if (typeof item === 'string') return estimatedStringBytes(item);
    if (typeof item === 'number' || typeof item === 'bigint') return BOXED_NUMBER;
    if (typeof item !== 'object' || item === null) return 0;
    if (seen.has(item)) return 0;
    seen.add(item);
    if (ArrayBuffer.isView(item)) return OBJECT_HEADER + item.byteLength;
    if (item instanceof Date) return OBJECT_HEADER + BOXED_NUMBER;
    if (item instanceof Map) {
      let bytes = COLLECTION_HEADER;
      for (const [key, entry] of item) bytes += COLLECTION_ENTRY + measure(key) + measure(entry);
      return bytes;
    }
    if (item instanceof Set) {
      let bytes = COLLECTION_HEADER;
      for (const entry of item) bytes += COLLECTION_ENTRY + measure(entry);
      return bytes;
    }
    let bytes = OBJECT_HEADER;
    if (Array.isArray(item)) {
      for (const element of item) bytes += SLOT + measure(element);
      return bytes;
    }
    for (const property of Object.values(item)) bytes += PROPERTY + measure(property);
    return bytes;
  };
  return measure(value);
}
