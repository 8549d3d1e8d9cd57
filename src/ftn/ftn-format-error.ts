/**
 * Bytes or text that do not follow the FidoNet-technology formats baud reads and writes:
 * addresses, packets, message bodies, bundles. The one error of `src/ftn/`'s pure modules, so a
 * caller catches one class whatever went wrong.
 *
 * `message` is the whole reason, written for a sysop reading the log or the note beside a packet
 * moved aside: where ("packet message 12 (byte 4711)") and what ("subject has no NUL within 72
 * bytes"). Bad input never surfaces as anything else: no RangeError from a Buffer read past its
 * end, no zlib error, no crash.
 *
 * It is not a `BaudError`: nothing here answers an HTTP request. A service that takes an address
 * from a client (netmail's `to: "Name@21:1/100"`) turns it into its own 400.
 */
export class FtnFormatError extends Error {
  override readonly name = 'FtnFormatError';
}

/** Longest text quoted back in an error: enough to recognise it, never a whole hostile line. */
const QUOTED_MAX = 60;

/** `text` in quotes for an error message: escaped, and cut when long. */
export function quoteForError(text: string): string {
  const cut = text.length > QUOTED_MAX ? `${text.slice(0, QUOTED_MAX)}…` : text;
  return JSON.stringify(cut);
}
