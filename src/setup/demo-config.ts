/**
 * The configuration `baud init --demo` writes: two message conferences (one readable without
 * an account), two file areas (one public). Written as HJSON text so the sysop gets a
 * commented file to edit, not a machine dump.
 */
export const DEMO_CONFIG_HJSON = `# baud demo board — edit freely; every key has a default (see README "Configuration").
# Relative paths are relative to this file's directory.
{
  general: {
    boardName: baud demo board
    sysopName: sysop
  }
  contentServers: {
    web: {
      address: 127.0.0.1
      port: 8080
      restApi: {
        enabled: true
        # Anonymous read access: every area of the "public" conference, nothing of "members".
        messages: { publicAccess: { public: { include: ["*"], exclude: [] } } }
        files: { publicAccess: { include: ["public_*"], exclude: [] } }
      }
    }
    # Callers in a terminal: \`ssh -p 2222 demo@127.0.0.1\` (the host key is made at first start).
    ssh: { enabled: true, address: "127.0.0.1", port: 2222 }
    # \`telnet 127.0.0.1 2323\`, for terminals that speak nothing else. Telnet carries passwords
    # unencrypted: keep it on this machine's loopback address unless that is acceptable.
    telnet: { enabled: true, address: "127.0.0.1", port: 2323 }
  }
  messageConferences: {
    public: {
      name: Public Square
      desc: Open to everyone, readable without an account
      areas: {
        general: { name: "General", desc: "Anything goes" }
        announcements: { name: "Announcements", desc: "News from the sysop", acs: { write: "GM[sysops]" } }
      }
    }
    members: {
      name: Members Lounge
      desc: For logged-in members only
      areas: {
        lounge: { name: "Lounge", desc: "Chat among members" }
        retro: { name: "Retro Computing", desc: "\\u001b[1;36mANSI\\u001b[0m art and old machines" }
      }
    }
  }
  fileBase: {
    storageTags: {
      public: files/public
      members: files/members
    }
    areas: {
      public_uploads: {
        name: Public Uploads
        desc: Files anyone may download; members may upload
        storageTags: ["public"]
        acs: { write: "GM[users]" }
      }
      member_files: {
        name: Members' Files
        desc: Files for members
        storageTags: ["members"]
      }
    }
  }
}
`;

/** What `baud init` (without --demo) writes: the defaults, spelled out where a sysop looks first. */
export const MINIMAL_CONFIG_HJSON = `# baud configuration — every key has a default (see README "Configuration").
# Relative paths are relative to this file's directory.
{
  general: { boardName: "baud" }
  contentServers: { web: { address: "127.0.0.1", port: 8080, restApi: { enabled: true } } }
  messageConferences: {}
  fileBase: { storageTags: {}, areas: {} }
}
`;
