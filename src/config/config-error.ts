import { BaudError, type ErrorCodeOf } from '../errors.js';

/**
 * A problem that must stop start-up or a command before it does anything: a configuration, a
 * board or a source that cannot be used as it is. The detail names the key, file or board and
 * the problem; the command line prints it as it is.
 */
export class ConfigError extends BaudError<ErrorCodeOf<500>> {
  override readonly name = 'ConfigError';
}
