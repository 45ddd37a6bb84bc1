import { InvalidOptionError, NoFenceHoldError } from '../core/errors/errors.js';
import { fenceMessages } from '../core/errors/messages.js';
import type { LeaderTerm } from '../core/leader/leadership-term.js';
import { termsInScope } from '../core/leader/leader-work.js';
import { handlesInScope } from '../core/reentrancy/lock-scope.js';
import type { LeaseHandle, LockHandle, MultiLockHandle } from '../core/port/lock-backend.js';

/**
 * What a fenced transaction can be run under: an exclusive hold, whose token no other
 * holder shares. A write lock, several (a multi-lock), a lease of 1, or a term of
 * leadership. Shared holds (read locks, leases of more than 1) are refused when called:
 * their holders run at once and may share a token, so the highest token seen would
 * refuse one of two legitimate holders.
 */
export type FenceLock = LockHandle | MultiLockHandle | LeaseHandle | LeaderTerm;

/** One resource a fenced transaction checks, with the token it writes under. */
export interface FencedResource {
  readonly resource: string;
  readonly token: bigint;
}

/** A `FenceLock` reduced to what the fence needs of it, the same for every kind. */
export interface FenceHolder {
  /** In the order they are checked: by resource name, so two transactions never lock rows in opposite orders. */
  readonly resources: readonly FencedResource[];
  /** Aborts when the lock (or term) can no longer be trusted. */
  readonly signal: AbortSignal;
  /** Throws the holder's own `LockLostError` unless it holds right now (released, lost, stepped down). */
  assertHeld(): void;
}

/** What `fenceHolder` reads of an argument, before it knows which kind it is. */
interface Unknown {
  readonly names?: unknown;
  readonly handles?: unknown;
  readonly group?: unknown;
  readonly assertLeading?: unknown;
  readonly maxLeases?: unknown;
  readonly mode?: unknown;
  readonly fencingToken?: unknown;
  readonly name?: unknown;
  readonly assertHeld?: unknown;
}

/** A non-empty string, or `InvalidOptionError` naming `option`. */
export function checkResource(option: string, resource: unknown): string {
  if (typeof resource !== 'string' || resource.length === 0)
    throw new InvalidOptionError(option, resource, fenceMessages.resource);
  return resource;
}

const byName = (a: FencedResource, b: FencedResource): number =>
  a.resource < b.resource ? -1 : a.resource > b.resource ? 1 : 0;

/**
 * Tells the kinds apart by their shape, since they are interfaces (a mock or a reentrant
 * hold is one too), checking the most specific first: a multi-lock has `names` and
 * `handles` arrays; a leader term has a string `group` and `assertLeading()`; a lease has
 * a numeric `maxLeases` (fenced only when it is 1); a lock has a string `name`, a bigint
 * `fencingToken` and `assertHeld()` (fenced only in `write` mode). Anything else is refused.
 */
export function fenceHolder(lock: FenceLock, resource: string | undefined): FenceHolder {
  const value = (lock ?? {}) as Unknown;
  if (resource !== undefined) checkResource('resource', resource);
  if (Array.isArray(value.names) && Array.isArray(value.handles)) {
    if (resource !== undefined) throw new InvalidOptionError('resource', resource, fenceMessages.resourceOfGroup);
    const group = lock as MultiLockHandle;
    const shared = group.handles.find((handle) => handle.mode === 'read');
    if (shared) throw new InvalidOptionError('lock', lock, fenceMessages.shared(`the read lock "${shared.name}"`));
    const resources = group.handles.map((handle) => ({ resource: handle.name, token: handle.fencingToken }));
    return { resources: resources.sort(byName), signal: group.signal, assertHeld: () => group.assertHeld() };
  }
  if (typeof value.group === 'string' && typeof value.assertLeading === 'function') {
    const term = lock as LeaderTerm;
    return {
      resources: [{ resource: resource ?? term.group, token: term.fencingToken }],
      signal: term.signal,
      assertHeld: () => term.assertLeading(),
    };
  }
  if (typeof value.maxLeases === 'number' && value.maxLeases !== 1)
    throw new InvalidOptionError('lock', lock, fenceMessages.shared(`a lease of ${value.maxLeases}`));
  if (value.mode === 'read') throw new InvalidOptionError('lock', lock, fenceMessages.shared('a read lock'));
  if (
    typeof value.name === 'string' &&
    typeof value.fencingToken === 'bigint' &&
    typeof value.assertHeld === 'function'
  ) {
    const handle = lock as LockHandle;
    return {
      resources: [{ resource: resource ?? handle.name, token: handle.fencingToken }],
      signal: handle.signal,
      assertHeld: () => handle.assertHeld(),
    };
  }
  throw new InvalidOptionError('lock', lock, fenceMessages.holder);
}

/**
 * What the current async call chain holds, as one holder: every write lock it holds (taken
 * by `@WithLock`, `withLock`, `withLocks` or a reentrant call, through any backend) and
 * every leader term its work runs under (`@WhenLeader`, `runAsLeader`), each fencing the
 * resource of its own name (a term: its group), checked in name order. Read locks are left
 * out: they need no fence, and could not have one. `name` picks one lock (or one term's
 * group) of them. Throws `NoFenceHoldError` when the chain holds nothing to fence with, or
 * nothing of that name.
 */
export function callFenceHolder(name: string | undefined): FenceHolder {
  if (name !== undefined) checkResource('name', name);
  const holds: { readonly name: string; readonly lock: FenceLock }[] = [
    ...handlesInScope().map((handle) => ({ name: handle.name, lock: handle })),
    ...termsInScope().map((term) => ({ name: term.group, lock: term })),
  ];
  const picked =
    name === undefined
      ? holds.filter(({ lock }) => (lock as LockHandle).mode !== 'read')
      : holds.filter((hold) => hold.name === name).slice(0, 1);
  if (picked.length === 0)
    throw new NoFenceHoldError(
      name,
      holds.map((hold) => hold.name),
    );
  const holders = picked.map(({ lock }) => fenceHolder(lock, undefined));
  if (holders.length === 1) return holders[0];
  return {
    resources: holders.flatMap((holder) => holder.resources).sort(byName),
    signal: AbortSignal.any(holders.map((holder) => holder.signal)),
    assertHeld: () => holders.forEach((holder) => holder.assertHeld()),
  };
}
