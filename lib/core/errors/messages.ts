/**
 * Every message the library shows a user is written once, here. Each one says what
 * happened, to which lock, and what to do about it.
 */
const show = (value: unknown): string => {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number' || typeof value === 'boolean' || value == null) return String(value);
  if (typeof value === 'function') return 'a function';
  return `a ${Object.prototype.toString.call(value).slice(8, -1)}`;
};

/** `"a"`, `"a" and "b"`, `"a", "b" and "c"`. */
const names = (list: readonly string[]): string => {
  const quoted = list.map((name) => JSON.stringify(name));
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} and ${quoted[quoted.length - 1]}` : quoted.join('');
};

export const lockMessages = {
  invalidName: (name: unknown, why: string): string =>
    `Invalid lock name ${show(name)}: ${why}. Pass a non-empty, well-formed string such as "orders/42".`,
  invalidOption: (option: string, value: unknown, expected: string): string =>
    `Invalid option ${option}=${show(value)}: expected ${expected}.`,
  timeout: (name: string, mode: string, timeoutMs: number): string =>
    timeoutMs === 0
      ? `Lock "${name}" (${mode}) is held by another client and the call asked not to wait (timeoutMs: 0). Retry later, or pass a timeoutMs to wait for it.`
      : `Timed out after ${timeoutMs} ms waiting for lock "${name}" (${mode}). Raise timeoutMs, or list who holds it with contenders("${name}").`,
  lockSubject: (name: string, mode: string): string =>
    mode === 'lease' ? `a lease of "${name}"` : `lock "${name}" (${mode})`,
  unavailable: (subject: string, state: 'disconnected' | 'lost', forMs: number): string =>
    `No ZooKeeper session is connected, so ${subject} could not be answered: ${
      state === 'lost'
        ? `the session was lost and no new one has connected (no connection for ${forMs} ms)`
        : `disconnected for ${forMs} ms, reconnecting`
    }. Nobody was found holding anything: nothing could be asked. Retry once ZooKeeper is reachable (the client's status() tells), or check the servers and the network.`,
  aborted: (name: string): string =>
    `Waiting for lock "${name}" was cancelled by its AbortSignal; no lock node was left behind.`,
  lost: (name: string, why: string): string =>
    `Lock "${name}" was lost: ${why}. Stop touching the protected resource; the fencing token of this grant is no longer valid.`,
  closingUnderHolder:
    'the lock client is closing while this holder had not released it (raise shutdownGraceMs to let running work finish first)',
  releasedHandle: 'this handle was released',
  upgrade: (name: string): string =>
    `Lock "${name}" is held for read in this call chain; taking it for write inside would wait for itself forever. Take it for write from the start, or take the write lock outside the read lock.`,
  reentry: (name: string): string =>
    `Lock "${name}" is already held by this call chain, and the call asked for a lock of its own (reentrant: false); it would wait for itself forever. Drop reentrant: false to join the lock held, or take it outside the section that holds it.`,
  order: (held: readonly string[], missing: readonly string[]): string =>
    `This call chain holds ${names(held)} and asked a multi-lock that must still take ${names(missing)}, which ${missing.length > 1 ? 'sort' : 'sorts'} before ${held.length > 1 ? 'them' : 'it'} in the one order every multi-lock takes names in (by encoded name). Waiting for ${missing.length > 1 ? 'them' : 'it'} while holding a later lock could deadlock with a client that takes the same names in that order, so nothing was taken. Take the held and the missing names together in one withLocks (or acquireAll) from the start, or release ${names(held)} before taking the others.`,
  connectFailed: (connectionString: string, timeoutMs: number): string =>
    `Could not connect to ZooKeeper at "${connectionString}" within ${timeoutMs} ms. Check that a server is running at that address, or raise connectTimeoutMs.`,
  connectRefused: (connectionString: string, ms: number): string =>
    `Could not connect to ZooKeeper at "${connectionString}": every server refused the connection for ${ms} ms (nothing listens at that address). Start ZooKeeper there or fix the connection string; unit tests can use ZkLockModule.forTesting(), which needs no server.`,
  missingChroot: (connectionString: string, chroot: string): string =>
    `The chroot "${chroot}" of "${connectionString}" does not exist on the ZooKeeper server. Create it once with a client that has no chroot (e.g. zkCli.sh: create ${chroot} ""), or remove it from the connection string.`,
  observerRefused: (server: string): string =>
    `ZooKeeper server ${server} is an observer: a session's touches may reach the leader through it a ping later than the lock's liveness proof allows (an observer master relays them once more), so this client does not hold locks through it and moves to another server. Name the ensemble's voting members (leader and followers) in the connection string.`,
  shortTimeoutRefused: (server: string, timeoutMs: number, tickTimeMs: number, minSessionTimeoutMs?: number): string =>
    `ZooKeeper server ${server} granted a session timeout of ${timeoutMs} ms, less than 2 × its tickTime (${tickTimeMs} ms${minSessionTimeoutMs === undefined ? '' : `; its minSessionTimeout is ${minSessionTimeoutMs} ms`}): the lock's liveness proof needs tickTime / 2 ≤ timeout / 4, so this client does not hold locks through it. Ask for sessionTimeoutMs of at least ${2 * tickTimeMs}, and keep the server's minSessionTimeout at 2 × tickTime or more (its default).`,
  badConnectionString: (connectionString: unknown, why: string): string =>
    `Invalid ZooKeeper connection string ${show(connectionString)}: ${why}. Use "host:port[,host:port…][/chroot]", e.g. "127.0.0.1:2181".`,
  sessionLost: (sessionId: string, why: string): string =>
    `ZooKeeper session 0x${sessionId} is gone (${why}); its ephemeral lock nodes are released by the server.`,
  notStarted: (): string =>
    'The lock client has not connected yet. Await its start() first (in Nest, ZkLockModule connects while the application initialises: use LockService from onModuleInit or later, not from a constructor).',
  shuttingDown: (name: string): string =>
    `Lock "${name}" was not acquired: this lock client is shutting down (in Nest: the application is stopping), so it cancelled the wait. Another instance can take the lock; retry the call there.`,
  closed: (): string =>
    'The lock client is closed. Create a new one (or, in Nest, do not use LockService after application shutdown).',
  operationFailed: (op: string, path: string, code: string): string =>
    `ZooKeeper ${op} on "${path}" failed with ${code}.`,
} as const;
