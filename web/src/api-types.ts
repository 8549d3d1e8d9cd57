import type { API_PREFIX } from '../../clients/typescript/src/index.js';
import type { components, paths } from '../../clients/typescript/src/schema.js';

export type { FileRecord } from '../../clients/typescript/src/index.js';

/** The answer of a GET, as the OpenAPI document describes it. */
type Answer<P extends keyof paths> = paths[P] extends {
  get: { responses: { 200: { content: { 'application/json': infer Body } } } };
}
  ? Body
  : never;

type Prefixed<S extends string> = `${typeof API_PREFIX}${S}`;

type Schemas = components['schemas'];
export type BoardInfo = Answer<Prefixed<'/system/info'>>;
export type OwnProfile = Answer<Prefixed<'/users/me'>>;
export type PublicProfile = Answer<Prefixed<'/users/{username}'>>;
export type MessageDetail = Answer<Prefixed<'/messages/{uuid}'>>;
export type MessageArea = Schemas['MessageArea'];
export type MessageSummary = Schemas['MessageSummary'];
export type ThreadMessage = Schemas['ThreadMessage'];
export type FoundMessage = Schemas['FoundMessage'];
export type FileArea = Schemas['FileArea'];
export type LastCaller = Schemas['LastCallerEntry'];
export type DeskAccount = Schemas['Account'];
export type AuditEntry = Schemas['AuditEntry'];
export type LoginSession = Schemas['OwnSession'];
export type SshKey = Schemas['SshKey'];
/** The start of two-factor enrolment (POST /users/me/totp): not on until a code confirms it. */
export type TotpEnrolment = NonNullable<
  paths[Prefixed<'/users/me/totp'>]['post']['responses'][200]['content']['application/json']
>;
export type MailSummary = Schemas['MailSummary'];
export type MailDetail = Answer<Prefixed<'/mail/{uuid}'>>;
export type FoundMail = Schemas['FoundMail'];
export type BlockedUser = Schemas['BlockedUser'];
