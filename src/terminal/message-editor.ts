import { MAX_BODY_BYTES, MAX_SUBJECT_CODE_POINTS, MAX_USER_NAME_CHARS } from '../messages/message-rules.js';
import type { CallerTerminal, InputHandler } from './caller-terminal.js';
import type { Key } from './key-input.js';
import { createLineEditor, type LineEditor } from './line-editor.js';
import { titleLines } from './menu-lines.js';
import type { Line } from './styled-text.js';
import { themed } from './theme.js';

/** What the editor hands over to be saved. */
export interface Draft {
  readonly to: string;
  readonly subject: string;
  /** The lines joined with `\n`: never holds a control character (the key decoder lets none through). */
  readonly body: string;
}

export interface ComposeOptions {
  /** The screen's heading: "Post in General", "Reply to bob", "New mail". */
  readonly heading: string;
  /** What `To:` starts with; the caller may change it. */
  readonly to: string;
  /** Whether an empty `To:` gives up (mail needs a recipient; a post goes to All). */
  readonly isRecipientRequired: boolean;
  /** Checked once `To:` is typed (mail: the recipient exists); a refusal is printed and `To:` asked again. */
  readonly checkRecipient?: (to: string) => Promise<void>;
  readonly subject: string;
  /** Lines the body starts with: the quote of a reply. */
  readonly quote: readonly string[];
  /**
   * Saves the draft (one service call: nothing is written before `/s`). A refusal is printed and
   * the caller goes on editing with the text kept, so a failed save loses nothing.
   */
  readonly save: (draft: Draft) => Promise<void>;
  /** Turns a failed save into the line to print; the errors that end the session are thrown on. */
  readonly failureLine: (error: unknown) => Line;
}

const SAVE_COMMAND = '/s';
const ABORT_COMMAND = '/a';

type BodyOutcome = { readonly kind: 'save' } | { readonly kind: 'abort' };

const lineNumber = (number: number) => `${String(number).padStart(3)}: `;

/**
 * The line editor for posts, replies and mail: `To:` and `Subject:` prompts, then body lines
 * until a line holding only `/s` (save) or `/a` (abort). Lines are capped like every typed line;
 * the body stops taking lines at the message rules' size limit. Returns whether it was saved.
 */
export async function composeMessage(term: CallerTerminal, options: ComposeOptions): Promise<'saved' | 'aborted'> {
  const { theme } = term;
  const header: Line[] = [...titleLines(theme, options.heading)];
  const showHeader = () => term.show(() => header);
  showHeader();

  let to = options.to;
  for (;;) {
    const typed = await term.readLine({
      prompt: [themed(theme, 'field', 'To: ')],
      initial: to,
      maxLength: MAX_USER_NAME_CHARS,
      inputStyle: theme.input,
    });
    if (typed === null) return 'aborted';
    to = typed.trim();
    if (to === '' && options.isRecipientRequired) return 'aborted';
    if (to === '' || options.checkRecipient === undefined) break;
    try {
      await options.checkRecipient(to);
      break;
    } catch (error) {
      term.print(options.failureLine(error));
    }
  }
  let subject = '';
  while (subject === '') {
    const typed = await term.readLine({
      prompt: [themed(theme, 'field', 'Subject: ')],
      initial: options.subject,
      maxLength: MAX_SUBJECT_CODE_POINTS,
      inputStyle: theme.input,
    });
    if (typed === null) return 'aborted';
    subject = typed.trim();
    if (subject === '') term.print([themed(theme, 'error', 'A message needs a subject.')]);
  }
  header.push(
    [themed(theme, 'field', 'To: '), { text: to === '' ? 'All' : to }],
    [themed(theme, 'field', 'Subject: '), { text: subject }],
    [themed(theme, 'muted', `Type the text. A line holding only ${SAVE_COMMAND} saves, ${ABORT_COMMAND} aborts.`)],
  );
  showHeader();

  const lines = [...options.quote];
  lines.forEach((line, index) => {
    term.print([themed(theme, 'muted', lineNumber(index + 1)), themed(theme, 'quote', line)]);
  });
  for (;;) {
    const outcome = await term.runInput(createBodyEditor(term, lines));
    if (outcome.kind === 'abort') return 'aborted';
    try {
      await options.save({ to, subject, body: lines.join('\n') });
      return 'saved';
    } catch (error) {
      term.print(options.failureLine(error));
    }
  }
}

/** UTF-8 bytes of `lines` joined by line ends: what the message rules count. */
function bodyBytes(lines: readonly string[]): number {
  let bytes = Math.max(0, lines.length - 1);
  for (const line of lines) bytes += Buffer.byteLength(line, 'utf8');
  return bytes;
}

/**
 * The body's lines as one input handler: a whole pasted message goes in without waiting for a
 * screen between lines. Adds each typed line to `lines` (kept by the caller across failed saves).
 */
function createBodyEditor(term: CallerTerminal, lines: string[]): InputHandler<BodyOutcome> {
  const { theme, writer } = term;
  let bytes = bodyBytes(lines);
  const editorFor = (): LineEditor =>
    createLineEditor(
      { writer, columns: () => term.size().columns },
      { prompt: [themed(theme, 'muted', lineNumber(lines.length + 1))] },
    );
  let editor = editorFor();

  const refuse = (text: string) => {
    term.print([themed(theme, 'error', text)]);
    editor = editorFor();
    editor.render();
  };

  return {
    onKey(key: Key) {
      // Ctrl-C and Ctrl-D would end a line editor: in a body they would lose a line for nothing.
      if (key.kind === 'interrupt' || key.kind === 'endOfInput') return undefined;
      const line = editor.onKey(key);
      if (line === undefined || line === null) return undefined;
      const command = line.trim().toLowerCase();
      if (command === ABORT_COMMAND) return { kind: 'abort' };
      if (command === SAVE_COMMAND) {
        if (lines.every((text) => text.trim() === '')) {
          refuse(`There is no text to save yet: type some, or ${ABORT_COMMAND} to abort.`);
          return undefined;
        }
        return { kind: 'save' };
      }
      const added = Buffer.byteLength(line, 'utf8') + (lines.length > 0 ? 1 : 0);
      if (bytes + added > MAX_BODY_BYTES) {
        refuse(
          `The message is full (${MAX_BODY_BYTES / 1024} KiB): ${SAVE_COMMAND} saves it, ${ABORT_COMMAND} aborts.`,
        );
        return undefined;
      }
      lines.push(line);
      bytes += added;
      // The typed line stays on screen as it was echoed; keeping it for a redraw costs a line.
      term.rememberLine([themed(theme, 'muted', lineNumber(lines.length)), { text: line }]);
      editor = editorFor();
      editor.render();
      return undefined;
    },
    render() {
      editor.render();
    },
  };
}
