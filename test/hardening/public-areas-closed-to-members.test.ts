import { afterAll, beforeAll, expect, it } from 'vitest';
import { PUBLIC_STAFF_AREAS_CONFIG, PUBLIC_STAFF_AREAS_WARNING } from '../setup/public-staff-areas.js';
import { describeEachDialect } from '../support/test-board.js';
import { api, login } from './support/api-client.js';
import { type BaudProcess, createHardeningBoard, type HardeningBoard } from './support/baud-process.js';

const PASSWORD = 'a member password 7c1e';

/**
 * A sysops-only area the public allowlist opens is read by anyone while members are refused:
 * what the spec says, almost never what the sysop meant. A real `baud serve` says so as it
 * starts, in its log and in the lines it prints.
 */
describeEachDialect('public areas closed to members, at start-up', (dialect) => {
  let board: HardeningBoard;
  let server: BaudProcess;
  beforeAll(async () => {
    board = createHardeningBoard(dialect, {
      ...PUBLIC_STAFF_AREAS_CONFIG,
      contentServers: { web: { ...PUBLIC_STAFF_AREAS_CONFIG.contentServers.web, reader: { enabled: false } } },
    });
    await board.addUsers([{ username: 'alice', password: PASSWORD }]);
    server = await board.start();
  }, 120_000);
  afterAll(async () => {
    await board?.destroy();
  });

  it('is so: anonymous callers read main/staff, a member is refused', async () => {
    const path = '/messages/areas/staff/messages';
    expect((await api(server.apiUrl, path)).status).toBe(200);
    const { accessToken } = await login(server.apiUrl, 'alice', PASSWORD);
    expect((await api(server.apiUrl, path, { token: accessToken })).status).toBe(403);
  });

  it('logs one warn line naming the areas, and prints the warning with the start-up lines', async () => {
    // Not a terminal: the log is JSON lines.
    await server.waitForOutput(/"level":40/);
    const warnings = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string; warning?: string })
      .filter((record) => record.level >= 40);
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 40,
        warning: 'public-areas-closed-to-members',
        msg: PUBLIC_STAFF_AREAS_WARNING,
      }),
    ]);
    expect(server.stdout().split('\n')).toContain(`  Warning: ${PUBLIC_STAFF_AREAS_WARNING}`);
  });
});
