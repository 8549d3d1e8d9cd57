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

/** Whether `value` has the exact shape of a generated key (anything else is not looked up). */
export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}
