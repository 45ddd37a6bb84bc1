import * as zookeeper from 'node-zookeeper-client';

/**
 * A bare node-zookeeper-client for the harness specs, with every state change it reports
 * recorded by name ("SYNC_CONNECTED", "DISCONNECTED", "EXPIRED", …) in `states`.
 */
export interface RawClient {
  client: zookeeper.Client;
  states: string[];
}

export async function openRawClient(connectionString: string, sessionTimeout = 4000): Promise<RawClient> {
  // retries: 0 so that a CONNECTION_LOSS reaches the callback instead of a silent retry.
  const client = zookeeper.createClient(connectionString, { sessionTimeout, retries: 0 });
  const states: string[] = [];
  client.on('state', (state: zookeeper.State) => states.push(state.name));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`raw client could not connect to ${connectionString}`)), 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return { client, states };
}

/** Closes a connected client (ends its session) and waits until its socket is gone. */
export async function closeRawClient(client: zookeeper.Client): Promise<void> {
  if (client.getState() !== zookeeper.State.SYNC_CONNECTED) {
    throw new Error(`closeRawClient: client is ${client.getState().name}, not connected`);
  }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('raw client did not disconnect after close()')), 10_000);
    client.once('disconnected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.close();
  });
}

/** The error code of a failed call (`zookeeper.Exception.CONNECTION_LOSS`…), or 0 on success. */
export function errorCode(error: unknown): number {
  if (!error) return 0;
  return (error as zookeeper.Exception).getCode?.() ?? Number.NaN;
}

export function createNode(client: zookeeper.Client, path: string, mode: number, data = ''): Promise<string> {
  return new Promise((resolve, reject) =>
    client.create(path, Buffer.from(data), mode, (error, created) => (error ? reject(error) : resolve(created))),
  );
}

export function statOf(client: zookeeper.Client, path: string): Promise<zookeeper.Stat | undefined> {
  return new Promise((resolve, reject) =>
    client.exists(path, (error, stat) => (error ? reject(error) : resolve(stat ?? undefined))),
  );
}

/** Session ids print as hex in four-letter replies; compare them as numbers. */
export function sessionIdOf(client: zookeeper.Client): bigint {
  return BigInt(`0x${client.getSessionId().toString('hex')}`);
}
