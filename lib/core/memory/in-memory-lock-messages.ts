/**
 * The in-memory backend's own messages, written once here in the style of
 * `../errors/lock.messages.ts`: what happened, to which lock, and what to do.
 */
export const inMemoryLockMessages = {
  optionsObject: 'an object such as { identity: "worker-1", store } (or nothing)',
  identity: 'a non-empty string of at most 4096 bytes',
  store: "an InMemoryLockStore (new InMemoryLockStore()), shared by the backends that should see each other's locks",
  lostByTest: (name: string): string =>
    `the test took it away with InMemoryLockBackend.loseLock(${JSON.stringify(name)}), as a crash or a lost session would`,
  sessionExpiredByTest:
    'its session was expired by the test with InMemoryLockBackend.expireSession(), as ZooKeeper expires a session it stopped hearing from',
  expiredByTest: 'expired by the test',
} as const;
