import { connect } from 'node:net';

/** Sends a four-letter command (`srvr`, `wchc`, `cons`, …) and returns the reply. */
export function fourLetter(port: number, command: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let reply = '';
    socket.setTimeout(timeoutMs, () => socket.destroy(new Error(`${command} timed out on port ${port}`)));
    socket.on('connect', () => socket.write(command));
    socket.on('data', (chunk) => (reply += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('close', () => resolve(reply));
  });
}
