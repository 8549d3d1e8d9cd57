import type { Migration } from 'kysely';
import { initialMigration } from './0001-initial.js';
import { loginAttemptsMigration } from './0002-login-attempts.js';
import { newScanMigration } from './0003-new-scan.js';
import { threadsMigration } from './0004-threads.js';
import { searchMigration } from './0005-search.js';
import { liveRepliesMigration } from './0006-live-replies.js';
import { eventsMigration } from './0007-events.js';
import { oneAreaIndexMigration } from './0008-one-area-index.js';
import { liveCountsMigration } from './0009-live-counts.js';
import { webhookTestWindowMigration } from './0010-webhook-test-window.js';
import { accountsMigration } from './0011-accounts.js';
import { twoFactorMigration } from './0012-two-factor.js';
import { sessionViaMigration } from './0013-session-via.js';
import { mailMigration } from './0014-mail.js';
import { sshKeysMigration } from './0015-ssh-keys.js';
import { ftnLinksMigration } from './0016-ftn-links.js';
import { ftnEchomailMigration } from './0017-ftn-echomail.js';
import { messageSearchKeyCheckMigration } from './0018-message-search-key-check.js';
import type { Dialect } from './dialect.js';

/**
 * Every migration, in order. Names are zero-padded so they sort; never rename or edit a
 * migration that has shipped — add the next number instead.
 */
export function boardMigrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-initial': initialMigration(dialect),
    '0002-login-attempts': loginAttemptsMigration,
    '0003-new-scan': newScanMigration,
    '0004-threads': threadsMigration(dialect),
    '0005-search': searchMigration(dialect),
    '0006-live-replies': liveRepliesMigration,
    '0007-events': eventsMigration(dialect),
    '0008-one-area-index': oneAreaIndexMigration,
    '0009-live-counts': liveCountsMigration(dialect),
    '0010-webhook-test-window': webhookTestWindowMigration,
    '0011-accounts': accountsMigration(dialect),
    '0012-two-factor': twoFactorMigration,
    '0013-session-via': sessionViaMigration,
    '0014-mail': mailMigration,
    '0015-ssh-keys': sshKeysMigration(dialect),
    '0016-ftn-links': ftnLinksMigration,
    '0017-ftn-echomail': ftnEchomailMigration(dialect),
    '0018-message-search-key-check': messageSearchKeyCheckMigration(dialect),
  };
}
