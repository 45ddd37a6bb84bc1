import * as zookeeper from 'node-zookeeper-client';

/**
 * Expires a live session on purpose: a second client attaches to the same session id and
 * password, then closes it. The server ends the session; the original client finds out
 * on its next contact.
 */
export async function expireSession(
  connectionString: string,
  credentials: { sessionId: Buffer; sessionPassword: Buffer },
  timeoutMs = 10_000,
): Promise<void> {
  const intruder = zookeeper.createClient(connectionString, { ...credentials, sessionTimeout: 4000, retries: 0 });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('could not attach to the session to expire it')), timeoutMs);
    intruder.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    intruder.connect();
  });
  await new Promise<void>((resolve) => {
    intruder.once('disconnected', () => resolve());
    intruder.close();
  });
}
