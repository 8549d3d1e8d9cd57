import { readFileSync } from 'node:fs';

/** baud's version, from package.json (one directory up from both src/ and dist/). */
export const BAUD_VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
