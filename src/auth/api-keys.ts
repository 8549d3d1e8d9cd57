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

/**
 * A key ENiGMA½ issued (`crypto.randomBytes(32).toString('hex')` in its core/rest/auth.js),
 * imported by its SHA-256 hash, which baud stores the same way.
 */
const ENIGMA_KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * Whether an `Authorization: Bearer` value is meant as an API key rather than an access token:
 * baud's keys say so by their `baud_` prefix, imported ones by their shape (64 hex digits, which
 * no access token has: a JWS in compact form carries two dots). Anything else is read as an
 * access token, so a value of no key's shape never reaches the key store.
 */
export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) || ENIGMA_KEY_PATTERN.test(value);
}

/**
 * Whether `value` can be a key at all (anything else is not looked up): the exact shape of a
 * key baud generates, or of one ENiGMA½ generated.
 */
export function isWellFormedApiKey(value: string): boolean {
  return value.startsWith(API_KEY_PREFIX) ? API_KEY_PATTERN.test(value) : ENIGMA_KEY_PATTERN.test(value);
}
