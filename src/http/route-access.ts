import type { Config } from '../config/load-config.js';

/** The public-toggle names of `contentServers.web.restApi.system.public`. */
export type PublicToggle = keyof Config['contentServers']['web']['restApi']['system']['public'];

/**
 * What a route needs before its handler runs. `public` routes may still refuse per item
 * (ACS-governed areas decide in their services); `authenticated` needs any valid credential;
 * a public toggle is public unless the sysop switched it off; `refreshCookie` routes (refresh,
 * logout) ignore credential headers and check the refresh cookie themselves.
 */
export type RouteAccess = 'public' | 'ownCredentials' | 'authenticated' | { readonly publicToggle: PublicToggle };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Routes without it need authentication: closed by default. */
    access?: RouteAccess;
  }
}
