import { type OwnProfile, PROFILE_FIELD_MAX_LENGTH } from '../../users/profile-service.js';
import { readDocument } from '../document-view.js';
import { promptLine, titleLines } from '../menu-lines.js';
import { NODE_ACTIONS, PROFILE_MENU } from '../menus.js';
import { singleLine } from '../message-text.js';
import { errorLine, type ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { themed } from '../theme.js';
import { dateTime } from '../times.js';

function profileLines(context: ScreenContext, profile: OwnProfile): Line[] {
  const { theme } = context.term;
  const field = (name: string, value: string): Line => [
    themed(theme, 'field', `${name.padEnd(14)}`),
    { text: singleLine(value) },
  ];
  return [
    ...titleLines(theme, `${PROFILE_MENU.title}: ${profile.username}`),
    field('Real name:', profile.realName),
    field('Location:', profile.location),
    field('Affiliations:', profile.affiliations),
    field('Web address:', profile.webAddress),
    field('Groups:', profile.groups.join(', ')),
    field('Member since:', dateTime(profile.accountCreated)),
    field('Calls:', String(profile.loginCount)),
    field('Posts:', String(profile.postCount)),
    field('Minutes on:', String(profile.minutesOnline)),
    field('Two-factor:', profile.totpEnabled ? 'on' : 'off'),
    [],
  ];
}

/** `U`: the caller's own profile, and its one-line fields to change (an empty answer clears one). */
export async function profileScreen(context: ScreenContext): Promise<undefined> {
  const { board, term } = context;
  const { theme } = term;
  let status: Line | undefined;
  for (;;) {
    context.doing(NODE_ACTIONS.viewingProfile);
    const profile = await board.profiles.getOwnProfile(await context.caller());
    const action = await readDocument(term, () => profileLines(context, profile), PROFILE_MENU, {
      enterAction: 'quit',
      quitAction: 'quit',
      status,
    });
    status = undefined;
    if (action === 'quit') return undefined;
    context.doing(NODE_ACTIONS.editingProfile);
    const label = PROFILE_MENU.items.find((item) => item.action === action)?.label ?? action;
    const typed = await term.readLine({
      prompt: promptLine(theme, `${label} (empty clears it): `, term.size().columns),
      initial: profile[action],
      maxLength: PROFILE_FIELD_MAX_LENGTH[action],
      inputStyle: theme.input,
    });
    if (typed === null) continue;
    try {
      const value = typed.trim();
      await board.profiles.updateOwnProfile(await context.caller(), { [action]: value === '' ? null : value });
      status = [themed(theme, 'success', `${label} saved.`)];
    } catch (error) {
      status = errorLine(context, error);
    }
  }
}
