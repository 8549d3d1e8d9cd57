import { createHash, randomBytes } from 'node:crypto';
import type { Scope } from '../caller.js';

export const API_KEY_PREFIX = 'baud_';
const API_KEY_PATTERN = /^baud_[A-Za-z0-9_-]{43}$/;

export type ApiKeyScope = 'read' | 'write' | 'read,write';
export const API_KEY_SCOPES: readonly ApiKeyScope[] = ['read', 'write', 'read,write'];

export function isApiKeyScope(value: string): value is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(value);
}

export function scopesOf(scope: string): ReadonlySet<Scope> {
  return new Set(scope.split(',').filter((part): part is Scope => part === 'read' || part === 'write'));
}

/** SHA-256, hex: keys have 256 bits of entropy, so a fast hash is enough (no salt needed). */
export function hashSecretToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A new raw key: `baud_` + 43 base64url characters (256 random bits). */
export function generateApiKeyValue(): string {
  return `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX);
}

// Keys imported from ENiGMA½ keep the form ENiGMA½ gave them, which baud does not know; a value
// longer than this, or with spaces or control characters, is no key of any board.
const IMPORTED_KEY_PATTERN = /^[\x21-\x7e]{1,256}$/;

/**
 * Whether `value` can be a key at all (anything else is not looked up): a `baud_` value must have
 * the exact shape of a generated key; any other is taken for an imported ENiGMA½ key, stored like
 * baud's by the SHA-256 of the raw string, and needs only to be printable ASCII of sane length.
 */
export function isWellFormedApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) ? API_KEY_PATTERN.test(value) : IMPORTED_KEY_PATTERN.test(value);
}
