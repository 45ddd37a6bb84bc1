import { connect } from 'node:net';

export interface FourLetterOptions {
  /** Gives up (rejects) when the reply is not complete by then. */
  readonly timeoutMs?: number;
  /** Gives up (rejects with its reason) when aborted. */
  readonly signal?: AbortSignal;
}

/**
 * Sends a four-letter command (`srvr`, `wchc`, `cons`, …) to a ZooKeeper server's client
 * port, on a connection of its own, and resolves with the reply once the server closes
 * that connection (which it does after every four-letter reply). The socket is closed
 * however it ends.
 */
export function fourLetter(
  host: string,
  port: number,
  command: string,
  { timeoutMs = 2_000, signal }: FourLetterOptions = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const socket = connect({ host, port });
    let reply = '';
    const onAbort = (): void => void socket.destroy(signal!.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    socket.setTimeout(timeoutMs, () =>
      socket.destroy(new Error(`${command} on ${host}:${port}: no complete reply within ${timeoutMs} ms`)),
    );
    socket.on('connect', () => socket.write(command));
    socket.on('data', (chunk: Buffer) => (reply += chunk.toString('utf8')));
    socket.on('error', (error) => reject(error));
    socket.on('close', () => {
      signal?.removeEventListener('abort', onAbort);
      resolve(reply); // after an error, the rejection came first
    });
  });
}
