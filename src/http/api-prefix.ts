/** Every API route lives under this prefix; problem `type`s and cookies use it too. */
export const API_PREFIX = '/_baud/api/v1';
