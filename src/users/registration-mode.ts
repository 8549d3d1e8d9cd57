import type { Config } from '../config/load-config.js';

/** How people join: active at once, pending until a sysop approves, or not at all. */
export type RegistrationMode = Config['users']['registration'];

/** The board's registration mode: `general.closedSystem` closes it whatever `users.registration` says. */
export function registrationModeOf(config: Config): RegistrationMode {
  return config.general.closedSystem ? 'closed' : config.users.registration;
}
