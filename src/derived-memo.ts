import { estimatedBytes } from './estimated-bytes.js';
import { chargeDerived, isRemembered } from './recent-cache.js';

/**
 * Derives a value from an object once per object. Remembered reads (see `RecentCache`) hand
 * out the same object on every hit, so what is derived from one — its text ANSI-stripped, the
 * answer serialised and tagged — can be kept beside it instead of being made again for every
 * request. Sources are held weakly: a derived value lives exactly as long as its source, and
 * counts against the byte budget of the cache that holds the source (`chargeDerived`).
 * `context` is what deriving needs besides the source (a reply to serialise with); it is only
 * used the first time, so it must not change what is derived. `isWorthKeeping` says which
 * sources are handed out again, so that their derived value is worth keeping.
 */
export function createDerivedMemo<Source extends object, Derived, Context extends unknown[] = []>(
  derive: (source: Source, ...context: Context) => Derived,
  isWorthKeeping: (source: Source) => boolean = isRemembered,
): (source: Source, ...context: Context) => Derived {
  const derived = new WeakMap<Source, Derived>();
  return (source, ...context) => {
    if (derived.has(source)) return derived.get(source) as Derived;
    const value = derive(source, ...context);
    // By default only what is derived from a remembered source is kept: any other source is
    // not handed out again, and keeping its value in a WeakMap got both moved to V8's old
    // generation, where they piled up as garbage while a client walked an area (RSS after
    // walking 100,000 messages twice: 163 MiB with them kept, 141 MiB without).
    if (!isWorthKeeping(source)) return value;
    derived.set(source, value);
    chargeDerived(source, value, () => estimatedBytes(value));
    return value;
  };
}
