/** A configuration problem that must stop start-up; the message names the key and the problem. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
