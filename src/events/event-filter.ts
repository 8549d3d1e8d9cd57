import { checkAreaGlobs, compileAreaGlobs } from '../access/area-glob.js';
import { BadRequestError } from '../errors.js';
import { type BoardEvent, EVENT_TYPES, type EventType } from './event-log.js';

/** What a stream or a webhook asked for: event types (empty: all) and area globs (empty: all). */
export interface EventFilter {
  readonly types: readonly EventType[];
  readonly areas: readonly string[];
}

/**
 * Checks the types and globs a client gave (`?types=`, `?areas=`, or a webhook's `events` and
 * `areas`): an unknown type or a bad glob (see area-glob.ts) is a 400 at `pointer`.
 */
export function checkEventFilter(
  types: readonly string[],
  areas: readonly string[],
  pointers: { readonly types: string; readonly areas: string },
): EventFilter {
  const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) {
    const message = `has unknown event types: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`;
    throw new BadRequestError('event.unknown-type', `${pointers.types} ${message}.`, [
      { pointer: pointers.types, message },
    ]);
  }
  return { types: [...new Set(types)] as EventType[], areas: checkAreaGlobs(areas, pointers.areas) };
}

/** The filter as a test of one event. An area glob filter passes events that have no area (logins). */
export function compileEventFilter(filter: EventFilter): (event: BoardEvent) => boolean {
  const types = new Set(filter.types);
  const inAreas = filter.areas.length === 0 ? () => true : compileAreaGlobs(filter.areas);
  return (event) => (types.size === 0 || types.has(event.type)) && (event.areaTag === null || inAreas(event.areaTag));
}

/** A comma-separated query parameter as its items (`a, b,,c` → a, b, c). */
export function commaList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
