/**
 * A bounded memory of recent answers, each kept for at most `maxAgeMs` and only while the
 * version it was loaded at is still current. The version is whatever the owner bumps when the
 * answers may have changed (a counter of this node's writes); a node's own writes therefore
 * take effect at once, and another node's within `maxAgeMs`. When full, the entry stored
 * longest ago goes first.
 */
export interface RecentCache<Value> {
  get(key: string, nowMs: number, version: number): Value | undefined;
  set(key: string, value: Value, loadedAtMs: number, version: number): void;
}

interface Entry<Value> {
  readonly value: Value;
  readonly loadedAtMs: number;
  readonly version: number;
}

export function createRecentCache<Value>(limits: { maxEntries: number; maxAgeMs: number }): RecentCache<Value> {
  const entries = new Map<string, Entry<Value>>();
  return {
    get(key, nowMs, version) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      const age = nowMs - entry.loadedAtMs;
      // A clock that went back (age < 0) cannot vouch for the entry either.
      if (entry.version === version && age >= 0 && age < limits.maxAgeMs) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key, value, loadedAtMs, version) {
      entries.delete(key);
      if (entries.size >= limits.maxEntries) entries.delete(entries.keys().next().value as string);
      entries.set(key, { value, loadedAtMs, version });
    },
  };
}
