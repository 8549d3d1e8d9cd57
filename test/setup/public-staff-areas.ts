/**
 * A board whose sysop opened every area to anonymous callers and forgot two sysops-only ones
 * (`main/staff`, `staff_files`): members are refused what anyone may read.
 */
export const PUBLIC_STAFF_AREAS_CONFIG = {
  messageConferences: {
    main: {
      name: 'Main',
      areas: { general: { name: 'General' }, staff: { name: 'Staff', acs: { read: 'GM[sysops]' } } },
    },
    members: { name: 'Members', areas: { lounge: { name: 'Lounge', acs: { read: 'GM[sysops]' } } } },
  },
  fileBase: {
    storageTags: { main: 'files/main' },
    areas: {
      public_files: { name: 'Public files', storageTags: ['main'] },
      staff_files: { name: 'Staff files', storageTags: ['main'], acs: { download: 'GM[sysops]' } },
    },
  },
  contentServers: {
    web: {
      restApi: {
        // `members` is not allowlisted: its sysops-only area is no concern.
        messages: { publicAccess: { main: { include: ['*'], exclude: [] } } },
        files: { publicAccess: { include: ['*'], exclude: [] } },
      },
    },
  },
};

/** What `baud serve` logs and `baud config check` prints about that board. */
export const PUBLIC_STAFF_AREAS_WARNING =
  'the public allowlist lets anonymous callers read message areas main/staff and file areas staff_files, ' +
  'whose read ACS refuses plain members (group "users"): anyone may read them without logging in while ' +
  'members are refused; narrow publicAccess or the ACS if that is not meant';
