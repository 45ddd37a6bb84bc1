import { fourLetter as fourLetterTo } from '../../../lib/core/zookeeper/session/four-letter';

/** Sends a four-letter command (`srvr`, `wchc`, `cons`, …) to the loopback server on `port` and returns the reply. */
export function fourLetter(port: number, command: string, timeoutMs = 2000): Promise<string> {
  return fourLetterTo('127.0.0.1', port, command, { timeoutMs });
}
