import { ZkOperationError } from '../../errors/errors.js';
import { OwnNodes } from './own-nodes.js';
import { ReattachSettling, type SettlingHost } from './reattach-settling.js';

const NODE = `/l/a/${'a'.repeat(32)}__lock__0000000001`;

/** Lets every promise chain under way run: the settling sends nothing outside microtasks here. */
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A host whose first delete fails with a connection loss, reporting `connected` as told. */
function lossyHost(state: { connected: boolean; lost?: boolean }) {
  const log: string[] = [];
  let failNext = true;
  const host: SettlingHost = {
    barrier: async () => void log.push('barrier'),
    getChildren: async () => ({ children: [] }),
    remove: async (path) => {
      log.push(`remove ${path}`);
      if (failNext) {
        failNext = false;
        throw new ZkOperationError('remove', path, 'CONNECTION_LOSS');
      }
    },
    isConnected: () => state.connected,
    isLost: () => state.lost === true,
    close: (why) => void log.push(`close ${why}`),
    settled: () => void log.push('settled'),
  };
  return { host, log };
}

function settlingOf(host: SettlingHost): ReattachSettling {
  const nodes = new OwnNodes();
  nodes.answered(NODE.slice(0, -10), NODE);
  return new ReattachSettling(new OwnNodes(nodes), true, host);
}

describe('ReattachSettling', () => {
  it('retries at once when the connection came back before its loss was told (the connect found it running)', async () => {
    const state = { connected: true };
    const { host, log } = lossyHost(state);
    const settling = settlingOf(host);
    settling.run();
    // The connection drops and comes back while the first try still runs: that connect's
    // run() finds it running, so only the failed try itself can start the next.
    settling.run();
    await turn();
    expect(log).toEqual(['barrier', `remove ${NODE}`, 'barrier', `remove ${NODE}`, 'settled']);
    expect(settling.pending).toBe(true); // released by finish(), as the session does on settled
    expect(settling.finish()).toBe(true);
  });

  it('waits for the next connect when the loss is told while disconnected', async () => {
    const state = { connected: false };
    const { host, log } = lossyHost(state);
    const settling = settlingOf(host);
    settling.run();
    await turn();
    expect(log).toEqual(['barrier', `remove ${NODE}`]); // no retry on a dead connection
    state.connected = true;
    settling.run(); // the next connect
    await turn();
    expect(log).toEqual(['barrier', `remove ${NODE}`, 'barrier', `remove ${NODE}`, 'settled']);
  });
});
