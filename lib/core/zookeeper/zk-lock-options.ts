import type { NodeFormat, ReleaseMode } from '../port/lock-backend.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';

import { InvalidOptionError } from '../errors/errors.js';
import { assertKnownOptions } from '../errors/unknown-option.js';
import { DEFAULT_NODE_FORMAT, validateNodeFormat } from '../port/node-format.js';
import { validateRootPath } from '../naming/root-path.js';
import {
  resolveZkClientOptions,
  type ResolvedZkClientOptions,
  type ZkClientOptions,
} from './session/zk-client-options.js';
import { resolveReleaseMode, wholeMilliseconds } from '../port/options.js';

export interface ZkLockOptions extends ZkClientOptions {
  /** Where lock directories live. Default `/locks`. */
  readonly rootPath?: string;
  /** Written into each lock node, shown by `contenders()`. Default `host:pid:<random id>`. */
  readonly identity?: string;
  /**
   * Delete a lock's directory when its last node goes. Default `true`. Set `false` when
   * Kazoo clients share the locks: Kazoo's `Lock` creates its directory once and then
   * fails with `NoNodeError` if it has vanished.
   */
  readonly removeEmptyDirectories?: boolean;
  /**
   * How long a lock directory may stay empty and unused by this client before it is
   * removed. Default 1000 ms, so that a lock taken again and again does not pay a
   * directory delete and re-create on every cycle; `0` removes it with the release. Any
   * whole number of milliseconds up to `Number.MAX_SAFE_INTEGER`.
   */
  readonly emptyDirectoryGraceMs?: number;
  /**
   * How lock nodes are named unless a call says otherwise: `"kazoo"` (default; Kazoo's
   * `Lock`, `ReadLock`, `WriteLock`), `"curator-mutex"` (Curator's `InterProcessMutex`;
   * write locks only) or `"curator-rw"` (Curator's `InterProcessReadWriteLock`). Every
   * client reads all three; the format decides which other clients see ours.
   */
  readonly nodeFormat?: NodeFormat;
  /**
   * When `release()` resolves unless a call says otherwise: `"sent"` (default), once the
   * delete of the lock's node is on its way, a round trip sooner on every cycle;
   * `"confirmed"`, once ZooKeeper answered it (what earlier versions did). Exclusion is
   * the same either way; see `ReleaseMode` and the handles' `releaseConfirmed`.
   */
  readonly release?: ReleaseMode;
}

export interface ResolvedZkLockOptions extends ResolvedZkClientOptions {
  readonly rootPath: string;
  readonly identity: string;
  readonly removeEmptyDirectories: boolean;
  readonly emptyDirectoryGraceMs: number;
  readonly nodeFormat: NodeFormat;
  readonly release: ReleaseMode;
}

export const DEFAULT_ROOT_PATH = '/locks';

/** Identity of this process's lock clients unless configured: `host:pid:instance`. */
export function defaultIdentity(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** Every option of `ZkLockOptions`. */
export const ZK_LOCK_OPTION_KEYS: readonly string[] = [
  'connectionString',
  'sessionTimeoutMs',
  'connectTimeoutMs',
  'credentials',
  'rootPath',
  'identity',
  'removeEmptyDirectories',
  'emptyDirectoryGraceMs',
  'nodeFormat',
  'release',
];

/**
 * Validates every option, unknown keys included, and merges the defaults, in one place,
 * before any connection. `owner` and `also`: who takes the options and what else it knows
 * (the Nest module's own options).
 */
export function resolveZkLockOptions(
  options: ZkLockOptions,
  owner = 'ZkLockBackend',
  also: readonly string[] = [],
): ResolvedZkLockOptions {
  const client = resolveZkClientOptions(options);
  assertKnownOptions(options, [...ZK_LOCK_OPTION_KEYS, ...also], owner);
  const {
    rootPath = DEFAULT_ROOT_PATH,
    identity = defaultIdentity(),
    removeEmptyDirectories = true,
    emptyDirectoryGraceMs = 1000,
  } = options;
  if (typeof identity !== 'string' || identity === '' || Buffer.byteLength(identity) > 4096) {
    throw new InvalidOptionError('identity', identity, 'a non-empty string of at most 4096 bytes');
  }
  if (typeof removeEmptyDirectories !== 'boolean') {
    throw new InvalidOptionError('removeEmptyDirectories', removeEmptyDirectories, 'true or false');
  }
  const nodeFormat = validateNodeFormat('nodeFormat', options.nodeFormat) ?? DEFAULT_NODE_FORMAT;
  return {
    ...client,
    rootPath: validateRootPath(rootPath),
    identity,
    removeEmptyDirectories,
    emptyDirectoryGraceMs: wholeMilliseconds('emptyDirectoryGraceMs', emptyDirectoryGraceMs, 0),
    nodeFormat,
    release: resolveReleaseMode(options.release) ?? 'sent',
  };
}
