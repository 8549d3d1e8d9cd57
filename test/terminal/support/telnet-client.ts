const IAC = 255;
const SB = 250;
const SE = 240;
const WILL = 251;
const DONT = 254;

/**
 * What a telnet server printed, its commands taken out: written apart from the server's parser
 * so the tests do not check that parser against itself.
 */
export function printedText(received: Buffer): string {
  const printed: number[] = [];
  for (let index = 0; index < received.length; index += 1) {
    const byte = received[index] as number;
    if (byte !== IAC) {
      printed.push(byte);
      continue;
    }
    const next = received[index + 1];
    if (next === IAC) {
      printed.push(IAC);
      index += 1;
    } else if (next !== undefined && next >= WILL && next <= DONT) {
      index += 2;
    } else if (next === SB) {
      const end = received.indexOf(Buffer.from([IAC, SE]), index + 2);
      index = end < 0 ? received.length : end + 1;
    } else {
      index += 1;
    }
  }
  return Buffer.from(printed).toString('utf8');
}
