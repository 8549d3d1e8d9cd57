/**
 * Derives a value from an object once per object. Remembered reads (see `RecentCache`) hand
 * out the same object on every hit, so what is derived from one — its text ANSI-stripped, the
 * answer serialised and tagged — can be kept beside it instead of being made again for every
 * request. Sources are held weakly: a derived value lives exactly as long as its source.
 */
export function createDerivedMemo<Source extends object, Derived>(
  derive: (source: Source) => Derived,
): (source: Source) => Derived {
  const derived = new WeakMap<Source, Derived>();
  return (source) => {
    if (derived.has(source)) return derived.get(source) as Derived;
    const value = derive(source);
    derived.set(source, value);
    return value;
  };
}
