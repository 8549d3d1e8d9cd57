import { forkBenchProcess, nextMessage } from './child-processes.js';
import type { Cleanup } from './cleanup.js';
import type { RecordedResponse } from './http-client.js';

export type CeilingResponse =
  | {
      readonly kind: 'bytes';
      readonly status: number;
      /** Flat `[name, value, name, value …]`, as `rawHeaders`. */
      readonly rawHeaders: readonly string[];
      readonly bodyBase64: string;
    }
  | { readonly kind: 'file'; readonly file: string; readonly size: number };

export type CeilingRequest = { readonly type: 'serve'; readonly response: CeilingResponse };
export type CeilingReply = { readonly type: 'ready'; readonly port: number } | { readonly type: 'serving' };

export interface CeilingServer {
  /** `http://127.0.0.1:<port>`: every path answers with what it was last told to serve. */
  readonly origin: string;
  /** From now on answer every request with exactly this recorded baud answer. */
  serveRecorded(response: RecordedResponse): Promise<void>;
  /** From now on answer every request with this file, streamed by `fs.createReadStream`. */
  serveFile(file: string, size: number): Promise<void>;
  stop(): Promise<void>;
}

const isReply = (message: unknown): message is CeilingReply =>
  typeof message === 'object' && message !== null && 'type' in message;

/** Forks the bare `node:http` server (`ceiling.process.ts`) and waits until it listens. */
export async function startCeilingServer(cleanup: Cleanup): Promise<CeilingServer> {
  const { child, stop } = forkBenchProcess('ceiling.process.ts', cleanup);
  const port = await nextMessage(child, (message) =>
    isReply(message) && message.type === 'ready' ? message.port : undefined,
  );
  const serve = async (response: CeilingResponse) => {
    const served = nextMessage(child, (message) => (isReply(message) && message.type === 'serving' ? true : undefined));
    child.send({ type: 'serve', response } satisfies CeilingRequest);
    await served;
  };
  return {
    origin: `http://127.0.0.1:${port}`,
    serveRecorded: (response) =>
      serve({
        kind: 'bytes',
        status: response.status,
        rawHeaders: response.rawHeaders,
        bodyBase64: response.body.toString('base64'),
      }),
    serveFile: (file, size) => serve({ kind: 'file', file, size }),
    stop,
  };
}
