import type { Board } from '../board.js';
import { createEventHub } from '../events/event-hub.js';
import { registrationModeOf } from '../users/registration-mode.js';
import type { CallerSessionOptions, TerminalServices } from './caller-session.js';
import { createConnectionLimits } from './connection-limits.js';
import { loadOrCreateHostKey } from './ssh-host-key.js';
import { type SshServer, startSshServer } from './ssh-server.js';
import { startTelnetServer, type TelnetServer } from './telnet-server.js';
import type { TerminalConnection } from './terminal-connection.js';

/** Starts the screens for one caller: `startCallerSession`, or a test's stand-in. */
export type StartCallerSession = (
  services: TerminalServices,
  connection: TerminalConnection,
  options: CallerSessionOptions,
) => void;

/** Where the servers log (a pino logger, as the HTTP app's, fits). */
export interface TerminalServersLog {
  info(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

export interface TerminalServers {
  readonly ssh: { readonly address: string; readonly port: number; readonly fingerprint: string } | null;
  readonly telnet: { readonly address: string; readonly port: number } | null;
  /** Says `SHUTDOWN_GOODBYE` to every caller, hangs up, stops listening and closes the event hub. */
  stop(): Promise<void>;
}

export const SHUTDOWN_GOODBYE = 'The board is shutting down. Goodbye.';

/**
 * Starts the SSH and telnet servers the configuration turns on (`contentServers.ssh`,
 * `.telnet`), under one set of connection limits (`contentServers.terminal`), and the node's
 * event hub the sessions share. The SSH host key is loaded, or made at first start.
 */
export async function startTerminalServers(deps: {
  board: Board;
  startSession: StartCallerSession;
  log: TerminalServersLog;
}): Promise<TerminalServers> {
  const { board, startSession, log } = deps;
  const { ssh: sshConfig, telnet: telnetConfig, terminal } = board.config.contentServers;
  const onError = (error: unknown, context: string) => log.error({ err: error }, context);
  const hub = createEventHub({
    log: board.events,
    database: board.database,
    pollIntervalMs: board.config.events.pollIntervalMs,
    onError: (error) => onError(error, 'terminal: reading the event log failed'),
  });
  const services: TerminalServices = { board, hub, log };
  const limits = createConnectionLimits(terminal);
  let ssh: SshServer | null = null;
  let telnet: TelnetServer | null = null;

  const stop = async () => {
    await Promise.all([ssh?.stop(SHUTDOWN_GOODBYE), telnet?.stop(SHUTDOWN_GOODBYE)]);
    await hub.close();
  };

  try {
    if (sshConfig.enabled) {
      const hostKey = await loadOrCreateHostKey(sshConfig.hostKeyPath);
      if (hostKey.wasCreated) log.info({ path: sshConfig.hostKeyPath }, 'SSH: made a new host key');
      ssh = await startSshServer({
        address: sshConfig.address,
        port: sshConfig.port,
        hostKey,
        limits,
        loginTimeoutSeconds: terminal.loginTimeoutSeconds,
        auth: board.auth,
        sshKeys: board.sshKeys,
        allowsSignUp: () => registrationModeOf(board.config) !== 'closed',
        startSession: (connection, options) => startSession(services, connection, options),
        onError,
      });
      log.info(
        { address: ssh.address, port: ssh.port, fingerprint: ssh.fingerprint },
        `SSH: listening on ${ssh.address}:${ssh.port} (host key ${ssh.fingerprint})`,
      );
    }
    if (telnetConfig.enabled) {
      telnet = await startTelnetServer({
        address: telnetConfig.address,
        port: telnetConfig.port,
        limits,
        loginTimeoutSeconds: terminal.loginTimeoutSeconds,
        startSession: (connection, options) => startSession(services, connection, options),
        onError,
      });
      log.info({ address: telnet.address, port: telnet.port }, `telnet: listening on ${telnet.address}:${telnet.port}`);
    }
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    ssh: ssh && { address: ssh.address, port: ssh.port, fingerprint: ssh.fingerprint },
    telnet: telnet && { address: telnet.address, port: telnet.port },
    stop,
  };
}
