import { AsyncLocalStorage } from 'node:async_hooks';

import type { LeaderWorkOptions } from '../core/leader/leader-work.js';
import type { LockList } from '../core/port/lock-backend.js';
import type { LeaseCallOptions, WithLockCallOptions, WithLocksCallOptions } from '../core/reentrancy/call-options.js';
import { ZkLockModuleMissingError } from './errors/errors.js';
import { type Decorator, nestMessages } from './errors/messages.js';

/**
 * What the decorators call on a `LockService`, and all a mock of one must implement. Each
 * call gets the method's body as `fn`, which takes no argument (a decorated method never
 * sees the handle): run it and resolve its result, or resolve `undefined` without running
 * it, as `ifLocked: 'skip'` does when the lock is taken.
 */
export interface LockServiceLike {
  /** For `@WithLock` with one name. */
  withLock<T>(name: string, fn: () => T | Promise<T>, options: WithLockCallOptions): Promise<T | undefined>;
  /** For `@WithLock` key functions that return several names; a mock without it cannot serve those. */
  withLocks?<T>(locks: LockList, fn: () => T | Promise<T>, options: WithLocksCallOptions): Promise<T | undefined>;
  /** For `@WithLease`; a mock without it cannot serve those. */
  withLease?<T>(name: string, fn: () => T | Promise<T>, options: LeaseCallOptions): Promise<T>;
}

/**
 * The property of every instance of a class with decorated methods where Nest injects
 * the `LockService` the class's module resolves (the decorators declare it, optional):
 * a provider of that module, a mock given with `useValue` included.
 */
export const INJECTED_LOCK_SERVICE = Symbol.for('nestjs-zk-lock.injected-lock-service');

interface Registry {
  /** Services of applications between their module init and their shutdown, oldest first, with whether they started. */
  readonly live: Map<LockServiceLike, { started: boolean }>;
  /** Instances with decorated methods, bound at module init to the service their module sees. */
  readonly owners: WeakMap<object, LockServiceLike>;
  /** Classes with decorated methods, to the services of the applications that provide them. */
  readonly classes: WeakMap<Function, Set<LockServiceLike>>;
  /** The service of the application a call runs for (set around handlers and decorated methods). */
  readonly ambient: AsyncLocalStorage<LockServiceLike>;
  /** Every service an application ever added: the real ones, which are used only while live (a mock has no lifecycle). */
  readonly known: WeakSet<LockServiceLike>;
}

/**
 * The value under `Symbol.for(key)` on `globalThis`, made once: shared by every loaded copy
 * of the package (CommonJS and ESM builds alike). A key names its value's shape: a change
 * of shape takes a new key.
 */
function processWide<T>(key: string, make: () => T): T {
  const holder = globalThis as typeof globalThis & Record<symbol, T | undefined>;
  return (holder[Symbol.for(key)] ??= make());
}

const registry: Registry = processWide('nestjs-zk-lock.lock-services.v3', () => ({
  live: new Map(),
  owners: new WeakMap(),
  classes: new WeakMap(),
  ambient: new AsyncLocalStorage(),
  known: new WeakSet(),
}));

/**
 * How a decorated method finds its application's `LockService` at call time, in this
 * order: the service its instance was bound to (singletons, and transient instances made at
 * start-up); the one the instance holds (Nest injected it for the class's module, a mock
 * provided beside the class included; or an instance made with `new` keeps it in a
 * field); the service of the one running application whose modules provide its class
 * with this service; the service of the application the call runs for (set around every
 * handler and every decorated method: request-scoped instances of a class two applications
 * provide, plain objects); for an object no application provides, the one application
 * running. Never a service of another application: shutdown removes an application's
 * service, and one whose start failed is superseded by the next.
 */
export const lockServiceRegistry = {
  /** The application's service, from its module init (decorated methods work in onModuleInit hooks) until `remove`. */
  add(service: LockServiceLike, bindings: { instances: readonly object[]; classes: readonly Function[] }): void {
    if (!registry.live.has(service)) registry.live.set(service, { started: false });
    registry.known.add(service);
    for (const instance of bindings.instances) registry.owners.set(instance, service);
    for (const type of bindings.classes) {
      let services = registry.classes.get(type);
      if (!services) registry.classes.set(type, (services = new Set()));
      services.add(service);
    }
  },
  /** The application finished starting (its bootstrap hooks run). */
  started(service: LockServiceLike): void {
    const entry = registry.live.get(service);
    if (entry) entry.started = true;
  },
  remove(service: LockServiceLike): void {
    registry.live.delete(service);
  },
  /** Runs `fn` as part of `service`'s application, for the methods it calls. */
  runFor<T>(service: LockServiceLike, fn: () => T): T {
    return registry.ambient.getStore() === service ? fn() : registry.ambient.run(service, fn);
  },
  /**
   * The service for `method`, decorated with `decorator`, called on `target` (an instance,
   * or a class for static methods); `ZkLockModuleMissingError` saying why there is none.
   */
  serviceFor(target: unknown, method: string, decorator: Decorator): LockServiceLike {
    const found = find(target);
    if (typeof found === 'string') throw new ZkLockModuleMissingError(method, found, decorator);
    return found;
  },
};

/** The service for a decorated method called on `target`, or why there is none. */
function find(target: unknown): LockServiceLike | string {
  const owner = isObject(target) ? registry.owners.get(target) : undefined;
  if (owner && registry.live.has(owner)) return owner;
  const held = heldBy(target);
  if (held) return held;
  const type = classOf(target);
  const providers = [...((type && registry.classes.get(type)) || [])].filter((service) => registry.live.has(service));
  if (providers.length === 1) return providers[0];
  const ambient = registry.ambient.getStore();
  if (ambient && registry.live.has(ambient) && (providers.length === 0 || providers.includes(ambient))) return ambient;
  return supersedingStart(providers.length > 0 ? providers : [...registry.live.keys()]) ?? whyNone(providers);
}

/**
 * Of several applications, the one that started when the others never did (their start
 * failed), or else the newest still starting: never a guess between two running ones.
 */
function supersedingStart(providers: LockServiceLike[]): LockServiceLike | undefined {
  const started = providers.filter((service) => registry.live.get(service)?.started);
  if (started.length === 1) return started[0];
  return started.length === 0 ? providers.at(-1) : undefined;
}

/**
 * The `LockService` an instance holds: the one Nest injected (`INJECTED_LOCK_SERVICE`), else
 * the one own field that looks like a `LockService` (a `withLock` function), as an
 * instance made with `new MyService(mock)` keeps it. A real service counts only while its
 * application runs; a mock always does. Several such fields: none (which one would be a guess).
 */
function heldBy(target: unknown): LockServiceLike | undefined {
  if (typeof target !== 'object' || target === null) return undefined;
  const injected = (target as Record<symbol, unknown>)[INJECTED_LOCK_SERVICE];
  const candidates = new Set(
    looksLikeLockService(injected) ? [injected] : Object.values(target).filter(looksLikeLockService),
  );
  const [held] = candidates;
  return candidates.size === 1 && (registry.live.has(held) || !registry.known.has(held)) ? held : undefined;
}

function looksLikeLockService(value: unknown): value is LockServiceLike {
  return isObject(value) && typeof (value as Partial<LockServiceLike>).withLock === 'function';
}

function whyNone(providers: LockServiceLike[]): string {
  if (registry.live.size === 0) return nestMessages.noService.noApplication;
  return providers.length === 0 ? nestMessages.noService.notProvided : nestMessages.noService.ambiguous;
}

function isObject(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function classOf(target: unknown): Function | undefined {
  if (typeof target === 'function') return target; // a static method's `this`
  if (typeof target === 'object' && target !== null) return (target as { constructor?: Function }).constructor;
  return undefined;
}

/** What `@WhenLeader` needs of a `LeadershipService`: `LeaderElection.runAsLeader` of a group. */
export interface LeadershipLike {
  runAsLeader<T>(group: string, fn: () => T | Promise<T>, options: LeaderWorkOptions): Promise<T> | undefined;
}

const leaderships = processWide('nestjs-zk-lock.leadership.v2', () => new WeakMap<object, LeadershipLike>());

/**
 * Each application's `LeadershipService`, under that application's `LockService`: a
 * `@WhenLeader` method finds its application's `LockService` through the lock-service
 * registry, and its leadership here. Held weakly, and only from construction to shutdown.
 */
export const leadershipRegistry = {
  register(lockService: object, leadership: LeadershipLike): void {
    leaderships.set(lockService, leadership);
  },
  unregister(lockService: object, leadership: LeadershipLike): void {
    if (leaderships.get(lockService) === leadership) leaderships.delete(lockService);
  },
  find(lockService: object): LeadershipLike | undefined {
    return leaderships.get(lockService);
  },
};
