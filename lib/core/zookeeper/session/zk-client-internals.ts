import type { Client, Transaction } from 'node-zookeeper-client';

/**
 * The only place that reaches into node-zookeeper-client 1.1.3's private fields. The public
 * API reports no "closed" state and offers no way to stop a client that is retrying a dead
 * server; both are needed to close without leaking a socket or a reconnect loop. The
 * dependency is pinned to 1.1.3 for this reason.
 */
interface ConnectionManagerInternals {
  state: number;
  pendingBuffer?: Buffer | null;
  /** The timer of the connection attempt under way: cleared by the client only once its socket connects or fails. */
  connectTimeoutHandler?: ReturnType<typeof setTimeout>;
  socket?: { destroy(): void; cork(): void; uncork(): void; remoteAddress?: string; remotePort?: number };
  on(event: 'state', listener: (state: number) => void): void;
  removeListener(event: 'state', listener: (state: number) => void): void;
  setState(state: number): void;
  queue(request: unknown, callback: (error: Error | null, response?: { payload: unknown }) => void): void;
}

const CM_CONNECTING = 1;
const CM_CLOSING = -1;
const CM_CLOSED = -2;
const CM_SESSION_EXPIRED = -3;
const CM_AUTH_FAILED = -4;

function manager(client: Client): ConnectionManagerInternals {
  return (client as unknown as { connectionManager: ConnectionManagerInternals }).connectionManager;
}

/**
 * Runs `send` with the client's socket corked: the client writes each request to its
 * socket as it is made, one system call each; requests made together leave as one write
 * (and reach the server as one segment). Nothing waits: the socket is uncorked before
 * this returns. Without a socket (not connected) the requests queue as usual.
 */
export function sendingTogether<T>(client: Client, send: () => T): T {
  const socket = manager(client).socket;
  socket?.cork();
  try {
    return send();
  } finally {
    socket?.uncork();
  }
}

/**
 * Queues a request the client has no method for (a `multiRead`), as its own methods do:
 * sent in order with the others, answered through `callback` (an error for a ZooKeeper
 * error, the reply's payload otherwise).
 */
export function queueRequest(
  client: Client,
  request: unknown,
  callback: (error: Error | null, payload?: unknown) => void,
): void {
  manager(client).queue(request, (error, response) => callback(error, response?.payload));
}

/** The server the client's socket is connected to now (`host:port`), if any. */
export function connectedServer(client: Client): string | undefined {
  const socket = manager(client).socket;
  if (!socket?.remoteAddress) return undefined;
  const host = socket.remoteAddress.includes(':') ? `[${socket.remoteAddress}]` : socket.remoteAddress;
  return `${host}:${socket.remotePort}`;
}

/** True once the client will never send anything again. */
export function isClientStopped(client: Client): boolean {
  const state = manager(client).state;
  return state === CM_CLOSED || state === CM_SESSION_EXPIRED || state === CM_AUTH_FAILED;
}

/** Resolves when the client reaches its terminal state (its socket is closed for good). */
export function whenClientClosed(client: Client): Promise<void> {
  const cm = manager(client);
  if (cm.state === CM_CLOSED) return Promise.resolve();
  return new Promise((resolve) => {
    const onState = (state: number): void => {
      if (state !== CM_CLOSED) return;
      cm.removeListener('state', onState);
      resolve();
    };
    cm.on('state', onState);
  });
}

/**
 * Stops a client that cannot send a close request (it is not connected): mark it closing,
 * so that it will not reconnect, and destroy its socket. Without this the client retries a
 * dead server forever. A connection attempt under way goes with its timer, which the client
 * clears only once the socket connects or fails (a socket destroyed while connecting does
 * neither): left, it would keep the process alive for the connect timeout.
 */
export function forceCloseClient(client: Client): void {
  const cm = manager(client);
  if (cm.state === CM_CLOSED) return;
  cm.setState(CM_CLOSING);
  clearTimeout(cm.connectTimeoutHandler);
  cm.socket?.destroy();
}

/**
 * Closes the client's socket without ending the session: the client reconnects (to
 * another server if it can) and the session goes on. For a server that went silent.
 */
export function dropConnection(client: Client): void {
  manager(client).socket?.destroy();
}

/**
 * Calls `listener` each time the client starts a connection attempt. The public API
 * reports no such state; the library needs it to time an attempt the server never
 * answers (node-zookeeper-client's connect timeout covers only the TCP handshake).
 */
export function onConnecting(client: Client, listener: () => void): void {
  manager(client).on('state', (state) => {
    if (state === CM_CONNECTING) listener();
  });
}

/**
 * Tells `hooks` how each TCP connection attempt ends: the server accepted it, or the
 * socket failed (e.g. ECONNREFUSED: nothing listens there). The public API reports
 * neither; the library needs them to fail fast when no server listens at all.
 */
export function onSocketOutcome(client: Client, hooks: { accepted(): void; failed(error: Error): void }): void {
  before(client, 'onSocketConnected', () => hooks.accepted());
  before(client, 'onSocketError', (error) => hooks.failed(error as Error));
}

/**
 * Calls `first` before the client handles anything its socket brings: bytes (every reply
 * and watch notification) and the close.
 */
export function beforeSocketEvents(client: Client, first: () => void): void {
  before(client, 'onSocketData', first);
  before(client, 'onSocketClosed', first);
}

type SocketHandler = 'onSocketConnected' | 'onSocketError' | 'onSocketData' | 'onSocketClosed';

/** Runs `first` ahead of the connection manager's `handler`, with the same arguments. */
function before(client: Client, handler: SocketHandler, first: (arg: unknown) => void): void {
  const cm = manager(client) as unknown as Record<SocketHandler, (...args: unknown[]) => unknown>;
  const original = cm[handler];
  // An own property shadows the prototype's: connect() binds these to each new socket.
  cm[handler] = function (this: unknown, ...args: unknown[]) {
    first(args[0]);
    return original.apply(this, args);
  };
}

/**
 * node-zookeeper-client keeps the bytes left over from a socket (the rest of a chunk after
 * a frame it gave up on, or half a frame when the connection dropped) in one buffer that
 * no socket owns, and prefixes them to the next connection's first bytes: the next
 * connect reply is then misread, and the client either hangs or throws out of its socket
 * handler, which ends the process. Clears it whenever a connection attempt starts.
 */
export function dropStaleBytesOnConnect(client: Client): void {
  const cm = manager(client);
  cm.on('state', (state) => {
    if (state === CM_CONNECTING) cm.pendingBuffer = null;
  });
}

/**
 * Gives the op just added to `transaction` (a remove, a check or a setData) `version`, 0
 * kept: node-zookeeper-client turns a version of 0 into -1 (`version || -1`), which would
 * act at any version.
 */
export function atVersion(transaction: Transaction, version: number): void {
  const ops = (transaction as unknown as { ops: Array<{ version: number }> }).ops;
  ops[ops.length - 1].version = version;
}
