import { InMemoryLockBackend, InMemoryLockStore } from '../../lib/index';
import { describeLockBackendConformance } from './lock-backend.conformance';

describeLockBackendConformance('in memory', async () => {
  const store = new InMemoryLockStore();
  const made: InMemoryLockBackend[] = [];
  const make = (): InMemoryLockBackend => {
    const backend = new InMemoryLockBackend({ store });
    made.push(backend);
    return backend;
  };
  return {
    backends: async (count) => Array.from({ length: count }, make),
    keepingIdleNames: async (count) => Array.from({ length: count }, make), // an idle name keeps nothing in memory
    losable: async () => make(),
    lose: async (backend, held) => (backend as InMemoryLockBackend).loseLock(held.name),
    releasesConfirmed: async () => void (await Promise.all(made.map((backend) => backend.releasesConfirmed()))),
    cleanup: async () => void (await Promise.all(made.map((backend) => backend.close()))),
  };
});
