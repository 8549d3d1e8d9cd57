import type { FileAreaSummary } from '../../files/file-service.js';
import type { FileRecord } from '../../files/file-store.js';
import { browseList } from '../browse-list.js';
import { readDocument } from '../document-view.js';
import { BACK_KEYS, LIST_KEYS, NODE_ACTIONS } from '../menus.js';
import { counted, singleLine, storedTextLines } from '../message-text.js';
import { pickFromList } from '../pick-from-list.js';
import type { ScreenContext } from '../screen-context.js';
import type { Line } from '../styled-text.js';
import { fitColumns } from '../text-width.js';
import { themed } from '../theme.js';
import { dateOnly, dateTime } from '../times.js';

const FILES_PER_PAGE = 15;

/** A size as a file list shows it: `512 B`, `12.3 KB`, `4.0 MB`. */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** A file's details: what the list leaves out, and its long description drawn as stored text. */
async function showFile(context: ScreenContext, file: FileRecord): Promise<undefined> {
  const { theme } = context.term;
  const field = (name: string, value: string): Line => [themed(theme, 'field', `${name.padEnd(11)}`), { text: value }];
  const header: Line[] = [
    [themed(theme, 'title', singleLine(file.fileName))],
    [],
    field('Size:', `${formatBytes(file.byteSize)} (${file.byteSize} bytes)`),
    field('Uploaded:', `${dateTime(file.uploadTimestamp)} by ${singleLine(file.uploadByUsername ?? 'the sysop')}`),
    field('Downloads:', String(file.dlCount)),
    ...(file.archiveType ? [field('Archive:', file.archiveType)] : []),
    ...(file.hashTags.length > 0 ? [field('Tags:', file.hashTags.map(singleLine).join(', '))] : []),
    field('SHA-256:', file.sha256),
    [],
    [{ text: singleLine(file.desc) }],
  ];
  const long = file.descLong.trim() === '' ? [] : [[], ...storedTextLines(file.descLong)];
  await readDocument(context.term, () => [...header, ...long], BACK_KEYS, { enterAction: 'quit', quitAction: 'quit' });
  return undefined;
}

/** `F`: file areas the caller may browse, then an area's files (newest first), then a file's details. */
export async function filesScreen(context: ScreenContext): Promise<undefined> {
  const { board, term } = context;
  const { theme } = term;
  context.doing(NODE_ACTIONS.browsingFiles);
  const areas = await board.files.listAreas(await context.caller());
  const picked = await pickFromList<FileAreaSummary>(term, {
    title: 'File areas',
    items: areas,
    tagOf: (area) => area.areaTag,
    row: (area, columns) => [
      themed(theme, 'label', fitColumns(singleLine(area.name), Math.min(30, Math.max(8, columns - 26)))),
      themed(theme, 'muted', ` ${fitColumns(area.areaTag, 12)} ${counted(area.fileCount, 'file', 'files')}`),
    ],
    emptyText: 'There are no file areas you may browse.',
    prompt: 'File area (number or tag, Enter: back): ',
  });
  if (picked === null) return undefined;
  const area = 'item' in picked ? picked.item : await board.files.getArea(await context.caller(), picked.tag);
  await browseList(context, {
    title: singleLine(area.name),
    pageSize: FILES_PER_PAGE,
    fetchPage: async (request) => board.files.listAreaFiles(await context.caller(), area.areaTag, request),
    entryLines: (file, columns) => [
      [
        themed(theme, 'label', fitColumns(singleLine(file.fileName), 16)),
        themed(theme, 'muted', ` ${formatBytes(file.byteSize).padStart(8)} ${dateOnly(file.uploadTimestamp)} `),
        { text: fitColumns(singleLine(file.desc), Math.max(4, columns - 42)) },
      ],
    ],
    emptyText: 'No files here yet.',
    menu: LIST_KEYS,
    open: (file) => showFile(context, file),
  });
  return undefined;
}
