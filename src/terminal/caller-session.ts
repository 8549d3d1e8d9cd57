import type { SessionTokens } from '../auth/auth-service.js';
import { ACTIVITY_WRITE_INTERVAL_MS } from '../auth/session-activity-service.js';
import type { Board } from '../board.js';
import type { EventHub } from '../events/event-hub.js';
import { CallerGoneError, type CallerTerminal, createCallerTerminal } from './caller-terminal.js';
import { NODE_ACTIONS, type NodeAction } from './menus.js';
import { singleLine } from './message-text.js';
import { type Notices, startNotices } from './notices.js';
import type { ScreenContext, TerminalLog } from './screen-context.js';
import { promptLogin } from './screens/login.js';
import { runMainMenu } from './screens/main-menu.js';
import { showWelcome } from './screens/welcome.js';
import { formatWait, UNEXPECTED_ERROR_TEXT } from './service-errors.js';
import { openSessionCredentials, type SessionCredentials, SessionEndedError } from './session-credentials.js';
import { type SessionTimers, systemTimers } from './session-timers.js';
import type { TerminalConnection } from './terminal-connection.js';
import { terminalProfileOf } from './terminal-profile.js';
import { cutToColumns } from './text-width.js';
import { DEFAULT_THEME, type Theme, themed } from './theme.js';

/** What a caller session is given by the server that accepted the connection. */
export interface TerminalServices {
  readonly board: Board;
  /** The node's one reader of the event log (src/events/event-hub.ts); start() it before subscribing. */
  readonly hub: Pick<EventHub, 'start' | 'subscribe'>;
  /** Where failures no caller should see go (the app's logger); stderr when not given. */
  readonly log?: TerminalLog;
  /** The timers of idleness, login time, the welcome pause and the node list; Node's when not given. */
  readonly timers?: SessionTimers;
  /** The screens' colours; DEFAULT_THEME when not given. */
  readonly theme?: Theme;
}

export interface CallerSessionOptions {
  /** The tokens of a login the transport made (SSH), or null: the session asks (telnet). */
  readonly login: SessionTokens | null;
  /** Called once the caller is logged in (the transport stops its login timeout). */
  readonly onLoggedIn?: () => void;
  /** Without a login: start with the sign-up questions (`ssh new@…`), as if `new` was typed at the prompt. */
  readonly signUp?: boolean;
}

/** One JSON line on stderr: what a session logs when its server gave it no logger. */
const stderrLog: TerminalLog = {
  error(details, message) {
    const err = (details as { err?: unknown }).err;
    process.stderr.write(`${JSON.stringify({ level: 'error', msg: message, err: String(err) })}\n`);
  },
};

/**
 * Serves one caller on `connection` until they leave: the login prompt (unless the transport
 * logged them in), the welcome screen, the main menu and its screens, notices of new mail and
 * of new messages where they read. Hangs up after `idleTimeoutSeconds` without a key, after
 * `loginTimeoutSeconds` at the login prompt, and when the login session ends elsewhere. However
 * the connection ends, the login session ends with it (a half-written message was never sent:
 * writing posts in one service call at `/s`).
 */
export function startCallerSession(
  services: TerminalServices,
  connection: TerminalConnection,
  options: CallerSessionOptions,
): void {
  const log = services.log ?? stderrLog;
  runCallerSession(services, connection, options, log).catch((error: unknown) => {
    log.error({ err: error }, 'a terminal session failed');
    connection.end();
  });
}

async function runCallerSession(
  services: TerminalServices,
  connection: TerminalConnection,
  options: CallerSessionOptions,
  log: TerminalLog,
): Promise<void> {
  const { board } = services;
  const timers = services.timers ?? systemTimers;
  const settings = board.config.contentServers.terminal;
  const boardName = singleLine(board.config.general.boardName);
  const term = createCallerTerminal(connection, {
    profile: terminalProfileOf(connection.terminalType),
    theme: services.theme ?? DEFAULT_THEME,
  });
  const { theme } = term;
  const cancels: (() => void)[] = [];
  const say = (text: string) => [themed(theme, 'muted', text)];

  let cancelIdle = () => {};
  const armIdleTimer = () => {
    cancelIdle();
    cancelIdle = timers.after(settings.idleTimeoutSeconds * 1000, () =>
      term.hangUp(say(`Nothing typed for ${formatWait(settings.idleTimeoutSeconds)}: goodbye.`)),
    );
  };
  armIdleTimer();
  term.onInput(armIdleTimer);
  cancels.push(() => cancelIdle());
  term.onGone(() => {
    for (const cancel of cancels) cancel();
  });

  let tokens = options.login;
  let credentials: SessionCredentials | null = null;
  let notices: Notices | null = null;
  try {
    if (tokens === null) {
      const cancelLoginTimer = timers.after(settings.loginTimeoutSeconds * 1000, () =>
        term.hangUp(say('The time to log in is up: goodbye.')),
      );
      try {
        tokens = await promptLogin({ board, term, connection, log }, { startWithSignUp: options.signUp === true });
      } finally {
        cancelLoginTimer();
      }
      if (tokens === null) {
        term.hangUp();
        return;
      }
    }
    credentials = await openSessionCredentials(board, tokens, { isSecure: connection.isSecure });
    if (term.isGone()) return;
    options.onLoggedIn?.();
    const session = credentials;

    let action: NodeAction = NODE_ACTIONS.mainMenu;
    const inBackground = (work: Promise<void>) =>
      work.catch((error: unknown) => {
        if (error instanceof SessionEndedError) term.hangUp(say(error.message));
        else log.error({ err: error }, 'a terminal session could not record its activity');
      });
    // The node list counts sessions seen within its window; a caller reading a long message
    // makes no request, so the session says it is there once per write interval.
    let cancelKeepAlive = () => {};
    const keepInNodeList = () => {
      cancelKeepAlive = timers.after(ACTIVITY_WRITE_INTERVAL_MS, () => {
        void inBackground(session.touch(action));
        keepInNodeList();
      });
    };
    keepInNodeList();
    cancels.push(() => cancelKeepAlive());
    // At once, or the node list would say "Logging in" for up to a minute.
    void inBackground(session.touch(action, true));

    notices = await startCallerNotices(services, session, term, log);
    const context: ScreenContext = {
      board,
      term,
      notices,
      caller: () => session.caller(),
      doing(next) {
        action = next;
        void inBackground(session.touch(next));
      },
      log,
    };
    await showWelcome(context, { pauseSeconds: settings.welcomePauseSeconds, timers });
    await runMainMenu(context);
    term.hangUp(say(`Goodbye, ${session.lastCaller().user.username}. Thanks for calling ${boardName}!`));
  } catch (error) {
    if (error instanceof SessionEndedError) term.hangUp(say(error.message));
    else if (!(error instanceof CallerGoneError)) {
      log.error({ err: error }, 'a terminal session failed');
      term.hangUp([themed(theme, 'error', UNEXPECTED_ERROR_TEXT)]);
    }
  } finally {
    for (const cancel of cancels) cancel();
    notices?.stop();
    term.hangUp();
    // However the caller left, their login session goes with them.
    await (credentials ? credentials.logout() : board.auth.logout(tokens?.refreshToken)).catch((error: unknown) =>
      log.error({ err: error }, 'a terminal session could not log out'),
    );
  }
}

/** The caller's notices, once the node's hub reads the log; none (logged) when it cannot. */
async function startCallerNotices(
  services: TerminalServices,
  session: SessionCredentials,
  term: CallerTerminal,
  log: TerminalLog,
): Promise<Notices> {
  const { board, hub } = services;
  const idle: Notices = { watchArea: () => {}, stop: () => {} };
  try {
    await hub.start();
  } catch (error) {
    log.error({ err: error }, 'the terminal notices could not start');
    return idle;
  }
  if (term.isGone()) return idle;
  return startNotices({
    hub,
    mayCallerSee: board.mayCallerSee,
    caller: () => session.lastCaller(),
    areaName: (areaTag) => singleLine(board.areas.messageAreas.get(areaTag)?.name ?? areaTag),
    tell: (text) => term.notice([themed(term.theme, 'notice', cutToColumns(text, term.size().columns - 1))]),
  });
}
