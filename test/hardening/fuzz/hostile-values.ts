import fc from 'fast-check';

/** Lone surrogates: not well-formed UTF-16, so they have no UTF-8 form at all. */
export const LONE_SURROGATES = ['\uD800', '\uDBFF', '\uDC00', '\uDFFF', 'a\uD83D', '\uDE00b'] as const;

/** Text that has broken parsers, routers, databases and terminals before. */
export const EDGE_TEXTS: readonly string[] = [
  '',
  ' ',
  '  padded  ',
  '.',
  '..',
  '...',
  '/',
  '\\',
  '%',
  '%%',
  '%00',
  '%2e%2e',
  '%2F',
  '?',
  '#',
  '&',
  '=',
  ';',
  '+',
  '*',
  '\u0000',
  'a\u0000b',
  '\u0001\u001f\u007f',
  '\t\r\n',
  '\u001b[1;31mred\u001b[0m',
  '\u001b]0;title\u0007',
  '|03pipe|23',
  '\u202Eevil\u202C',
  '\u200F\u05E9\u05DC\u05D5\u05DD',
  'مرحبا',
  '😀',
  '👩‍👩‍👧‍👦',
  '🏳️‍🌈',
  'e\u0301',
  `a${'\u0300'.repeat(64)}`,
  'Z̤͔ͧ̑̓ä͖̭̈̇lͮ̒ͫǧ̗͚̚o̙̔ͮ̇͐̇',
  '\uFFFF',
  '\uFFFE',
  '\uFEFF',
  '\u200B',
  '\u2028\u2029',
  'İ',
  'ß',
  'ﬃ',
  'Ω',
  'null',
  'undefined',
  'true',
  'false',
  '0',
  '-0',
  '-1',
  'NaN',
  'Infinity',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  "' OR '1'='1",
  '"; DROP TABLE users; --',
  '<script>alert(1)</script>',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell probe, meant literally
  '${jndi:ldap://x}',
  '{{7*7}}',
  '../../../../etc/passwd',
  '..\\..\\windows\\win.ini',
  'CON',
  ...LONE_SURROGATES,
];

/** Texts that are not a decimal integer in range, for integer parameters. */
export const NOT_INTEGER_TEXTS: readonly string[] = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e400',
  '1e2',
  '0x1',
  '0b1',
  '0o7',
  '1.0',
  '1.5',
  '-1',
  '0',
  '9007199254740993',
  '2147483648',
  '99999999999999999999999999',
  ' 1',
  '1 ',
  '+1',
  '1_000',
  '١',
  '１',
  'true',
  'null',
  '[]',
  '1,2',
  '-',
  'abc',
  '',
];

/** Long text, up to the size a real server's request line could still carry. */
export const hugeText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('a', 'é', '😀', '\u0000', '.', '%'), fc.integer({ min: 65, max: 6000 }))
  .map(([char, count]) => char.repeat(count));

/** Any of the above, or random text over all of Unicode (lone surrogates included). */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...EDGE_TEXTS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc.string({
      unit: fc.constantFrom(...LONE_SURROGATES, 'a', '\u0000', 'é', '😀', '\u0301'),
      maxLength: 12,
    }),
  },
  { weight: 1, arbitrary: hugeText },
);

/** Ordinary text of the kind clients send. */
export const plainText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('Hello', 'Re: fuzzing', 'Meeting at 8', 'Grüße aus Köln', '\u001b[1;31mred\u001b[0m text', 'All'),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
);

/**
 * `text` as it goes into a URL path segment or query value: percent-encoded UTF-8, except that a
 * lone surrogate is sent as its WTF-8 bytes (`%ED%A0%80`), as a careless client would.
 */
export function encodeUrlText(text: string): string {
  let encoded = '';
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) {
      const bytes = [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
      encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    } else {
      encoded += encodeURIComponent(char);
    }
  }
  return encoded;
}

/** Whether the server can decode `text` back from `encodeUrlText(text)` (lone surrogates cannot). */
export function isWellFormed(text: string): boolean {
  return !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

/** Raw URL pieces that are not valid percent-encoding, or that routers treat specially. */
export const RAW_URL_GARBAGE: readonly string[] = [
  '%',
  '%Z',
  '%ZZ',
  '%E0%A4%A',
  '%ED%A0%80',
  '%C0%AE',
  '%FF',
  '%C0%80',
  '%2e',
  '%2e%2e',
  '.',
  '..',
  ';',
  ';x=1',
  '%252F',
];

/** Header values a client can actually put on the wire: visible Latin-1 and tab. */
export const headerText: fc.Arbitrary<string> = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }), fc.constant(0x09))
    .map((code) => String.fromCharCode(code)),
  maxLength: 60,
});
