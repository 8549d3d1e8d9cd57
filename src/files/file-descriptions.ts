import { cutToCodePoints } from '../text/cut-code-points.js';

/** What an upload tells us about itself: the form fields and what the archive contained. */
export interface UploadDescriptionInput {
  readonly fileName: string;
  readonly formDesc?: string | null;
  /** The `hashTags` form field: comma separated, `#` optional. */
  readonly formHashTags?: string | null;
  /** Text of FILE_ID.DIZ / FILE_ID.ANS / DESC.SDI, from readArchiveDescriptions. */
  readonly diz: string | null;
  /** Text of the first *.NFO / README*, from readArchiveDescriptions. */
  readonly longText: string | null;
  /** Upper bound for plausible release years. */
  readonly now: Date;
}

/** The description fields of a file record. */
export interface UploadDescription {
  readonly desc: string;
  readonly descLong: string;
  readonly estReleaseYear: number | null;
  readonly hashTags: string[];
}

export const MAX_HASH_TAGS = 32;
export const MAX_HASH_TAG_LENGTH = 64;

const FIRST_RELEASE_YEAR = 1970;

// A year is four digits not glued to other letters or digits: "(c) 1995" and "1995-96"
// count, "v19950" and "x1995" do not.
const YEAR = /(?<![\p{L}\p{N}_])\d{4}(?![\p{L}\p{N}_])/gu;

// A tag starts after a non-word character, so "foo#bar", "&#39;" and URL fragments
// ("/#top") are not tags.
const HASH_TAG = /(?<![\p{L}\p{M}\p{N}_&/#])#([\p{L}\p{M}\p{N}_-]+)/gu;
const HAS_LETTER = /\p{L}/u;
const CONTROL_CHARACTERS = /\p{Cc}/gu;

function nonBlank(text: string | null | undefined): string | null {
  return text != null && text.trim() !== '' ? text : null;
}

function fileNameWithoutExtension(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(0, dot) : fileName;
}

function findReleaseYear(texts: readonly string[], maxYear: number): number | null {
  for (const text of texts) {
    for (const match of text.matchAll(YEAR)) {
      const year = Number(match[0]);
      if (year >= FIRST_RELEASE_YEAR && year <= maxYear) return year;
    }
  }
  return null;
}

function tagsInText(text: string): string[] {
  const tags: string[] = [];
  for (const match of text.matchAll(HASH_TAG)) {
    const tag = (match[1] ?? '').replace(/^-+|-+$/g, '');
    // "#1" is a rank, not a tag.
    if (HAS_LETTER.test(tag)) tags.push(tag);
  }
  return tags;
}

function tagsInFormField(field: string): string[] {
  return field.split(',').map((tag) => tag.replace(CONTROL_CHARACTERS, '').trim().replace(/^#/, '').trim());
}

function collectHashTags(texts: readonly string[], formHashTags: string | null | undefined): string[] {
  const candidates = [...texts.flatMap(tagsInText), ...tagsInFormField(formHashTags ?? '')];
  const tags = new Set<string>();
  for (const candidate of candidates) {
    const tag = cutToCodePoints(candidate.toLowerCase(), MAX_HASH_TAG_LENGTH).trim();
    if (tag === '') continue;
    tags.add(tag);
    if (tags.size === MAX_HASH_TAGS) break;
  }
  return [...tags];
}

/**
 * Derives a file record's description fields from an upload (decisions.md, "Files"):
 *
 * - `desc`: the form's `desc` (trimmed) if not blank, else the DIZ text, else the file
 *   name without its extension;
 * - `descLong`: the NFO/README text, else the DIZ text, else "";
 * - `estReleaseYear`: the first word-bounded four-digit year in 1970..now (UTC) in `desc`,
 *   then `descLong`; null if none;
 * - `hashTags`: `#tags` in `desc` then `descLong` (letters, digits, `_`, `-`; at least one
 *   letter), then the comma-separated form field; lowercased, without `#`, trimmed,
 *   deduplicated in first-seen order, each cut to 64 characters, at most 32.
 *
 * @example describeUpload({ fileName: 'demo.zip', diz: null, longText: null, now: new Date() }).desc // 'demo'
 */
export function describeUpload(input: UploadDescriptionInput): UploadDescription {
  const formDesc = nonBlank(input.formDesc);
  const diz = nonBlank(input.diz);
  const desc = formDesc?.trim() ?? diz ?? fileNameWithoutExtension(input.fileName);
  const descLong = nonBlank(input.longText) ?? diz ?? '';
  const texts = [desc, descLong];
  return {
    desc,
    descLong,
    estReleaseYear: findReleaseYear(texts, input.now.getUTCFullYear()),
    hashTags: collectHashTags(texts, input.formHashTags),
  };
}
