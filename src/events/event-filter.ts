import picomatch from 'picomatch';
import { BadRequestError } from '../errors.js';
import { type BoardEvent, EVENT_TYPES, type EventType } from './event-log.js';

/** At most this many area globs in a filter. */
export const MAX_AREA_GLOBS = 32;

/** What a stream or a webhook asked for: event types (empty: all) and area globs (empty: all). */
export interface EventFilter {
  readonly types: readonly EventType[];
  readonly areas: readonly string[];
}

/**
 * Checks the types and globs a client gave (`?types=`, `?areas=`, or a webhook's `events` and
 * `areas`): an unknown type or a bad glob is a 400 at `pointer`.
 */
export function checkEventFilter(
  types: readonly string[],
  areas: readonly string[],
  pointers: { readonly types: string; readonly areas: string },
): EventFilter {
  const unknown = types.filter((type) => !(EVENT_TYPES as readonly string[]).includes(type));
  if (unknown.length > 0) {
    const message = `has unknown event types: ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`;
    throw new BadRequestError(`${pointers.types} ${message}.`, [{ pointer: pointers.types, message }]);
  }
  if (areas.length > MAX_AREA_GLOBS || areas.some((glob) => glob === '' || glob.length > 256)) {
    const message = `must be at most ${MAX_AREA_GLOBS} globs of 1 to 256 characters`;
    throw new BadRequestError(`${pointers.areas} ${message}.`, [{ pointer: pointers.areas, message }]);
  }
  return { types: [...new Set(types)] as EventType[], areas: [...new Set(areas)] };
}

/** The filter as a test of one event. An area glob filter passes events that have no area (logins). */
export function compileEventFilter(filter: EventFilter): (event: BoardEvent) => boolean {
  const types = new Set(filter.types);
  const inAreas = filter.areas.length === 0 ? () => true : picomatch([...filter.areas], { dot: true });
  return (event) => (types.size === 0 || types.has(event.type)) && (event.areaTag === null || inAreas(event.areaTag));
}

/** A comma-separated query parameter as its items (`a, b,,c` → a, b, c). */
export function commaList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
