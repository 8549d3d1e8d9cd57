import { estimatedBytes } from './estimated-bytes.js';
import { chargeDerived } from './recent-cache.js';

/**
 * Derives a value from an object once per object. Remembered reads (see `RecentCache`) hand
 * out the same object on every hit, so what is derived from one — its text ANSI-stripped, the
 * answer serialised and tagged — can be kept beside it instead of being made again for every
 * request. Sources are held weakly: a derived value lives exactly as long as its source, and
 * counts against the byte budget of the cache that holds the source (`chargeDerived`).
 * `context` is what deriving needs besides the source (a reply to serialise with); it is only
 * used the first time, so it must not change what is derived.
 */
export function createDerivedMemo<Source extends object, Derived, Context extends unknown[] = []>(
  derive: (source: Source, ...context: Context) => Derived,
): (source: Source, ...context: Context) => Derived {
  const derived = new WeakMap<Source, Derived>();
  return (source, ...context) => {
    if (derived.has(source)) return derived.get(source) as Derived;
    const value = derive(source, ...context);
    derived.set(source, value);
    chargeDerived(source, value, () => estimatedBytes(value));
    return value;
  };
}
