import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Streams `source`, through `transforms`, into a new file at `filePath` ('wx': never follows or
 * overwrites anything already there). On any failure — of the source, a transform or the disk —
 * the file is removed and the error rethrown: no half-written file stays.
 *
 * The removal waits for the file's write stream to close. pipeline() can settle as soon as the
 * failing streams are done, while the sink is still opening its file (seen with busboy's file
 * streams); removed at once, the file would be created a moment later and stay. The sink's
 * 'close' comes after its open, whatever failed.
 */
export async function pipeIntoNewFile(
  filePath: string,
  source: Readable,
  ...transforms: readonly Transform[]
): Promise<void> {
  const sink = createWriteStream(filePath, { flags: 'wx' });
  try {
    await pipeline([source, ...transforms, sink]);
  } catch (error) {
    if (!sink.closed) await new Promise<void>((resolve) => sink.once('close', () => resolve()));
    await rm(filePath, { force: true }).catch(() => {});
    throw error;
  }
}
