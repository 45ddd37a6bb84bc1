import type { NodeFormat } from '../port/lock-backend.js';
import { hostname } from 'node:os';

import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { DEFAULT_NODE_FORMAT, validateNodeFormat } from '../port/node-format.js';
import { inMemoryLockMessages as messages } from '../errors/messages.js';
import { InMemoryLockStore } from './in-memory-lock-store.js';

export interface InMemoryLockBackendOptions {
  /** Shown by `contenders()` for this backend's entries. Default `host:pid:memory-<n>`. */
  readonly identity?: string;
  /**
   * The lock service this backend is a client of. Backends given the same store see each
   * other's locks, like application instances sharing one ZooKeeper. Default: a store of its own.
   */
  readonly store?: InMemoryLockStore;
  /** Checked and applied as `ZkLockOptions.nodeFormat` is (node names in `contenders()`). Default `"kazoo"`. */
  readonly nodeFormat?: NodeFormat;
}

export interface ResolvedInMemoryLockOptions {
  readonly identity: string;
  readonly store: InMemoryLockStore;
  readonly nodeFormat: NodeFormat;
}

const KNOWN_OPTIONS: readonly string[] = ['identity', 'store', 'nodeFormat'];
const MAX_IDENTITY_BYTES = 4096;
let instances = 0;

/** Like `ZkLockOptions`' default (`host:pid:<instance>`), marked as an in-memory client. */
export function defaultMemoryIdentity(): string {
  return `${hostname()}:${process.pid}:memory-${++instances}`;
}

/** Validates every option, unknown keys included, and merges the defaults in one place. */
export function resolveInMemoryLockOptions(
  options: InMemoryLockBackendOptions | undefined,
): ResolvedInMemoryLockOptions {
  if (options === undefined)
    return { identity: defaultMemoryIdentity(), store: new InMemoryLockStore(), nodeFormat: DEFAULT_NODE_FORMAT };
  if (options === null || typeof options !== 'object')
    throw new InvalidOptionError('options', options, messages.optionsObject);
  assertKnownOptions(options, KNOWN_OPTIONS, 'InMemoryLockBackend');
  const { identity = defaultMemoryIdentity(), store = new InMemoryLockStore() } = options;
  if (typeof identity !== 'string' || identity === '' || Buffer.byteLength(identity) > MAX_IDENTITY_BYTES) {
    throw new InvalidOptionError('identity', identity, messages.identity);
  }
  if (!(store instanceof InMemoryLockStore)) throw new InvalidOptionError('store', store, messages.store);
  const nodeFormat = validateNodeFormat('nodeFormat', options.nodeFormat) ?? DEFAULT_NODE_FORMAT;
  return { identity, store, nodeFormat };
}
