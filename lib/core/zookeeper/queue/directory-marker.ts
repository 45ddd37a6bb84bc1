/**
 * A semaphore's directory records its number of leases in its own data, written once by
 * the create that makes the directory, so that every client checks the same number:
 * `{"kind":"nestjs-zk-lock/lease","maxLeases":3}`. Deliberately not Kazoo's format (the
 * bare count, `3`): the two recipes cannot share a semaphore (see docs/recipes.md, "Leases"), and
 * each must recognise the other's directory instead of joining it.
 */
export const LEASE_DIRECTORY_KIND = 'nestjs-zk-lock/lease';

export type DirectoryKind =
  /** No data: what a lock's directory (ours, Kazoo's, Curator's) looks like. */
  | { readonly kind: 'lock' }
  | { readonly kind: 'lease'; readonly maxLeases: number }
  /** Kazoo's `Semaphore` writes `str(max_leases)` into its directory. */
  | { readonly kind: 'kazoo-semaphore'; readonly maxLeases: number }
  /** Data that no recipe of this library or Kazoo wrote. */
  | { readonly kind: 'unknown' };

const KAZOO_COUNT = /^\s*[+-]?\d+\s*$/; // what Python's int() accepts, as Kazoo parses it

/** The directory data of a semaphore of `maxLeases`. */
export function leaseDirectoryData(maxLeases: number): Buffer {
  return Buffer.from(JSON.stringify({ kind: LEASE_DIRECTORY_KIND, maxLeases }), 'utf8');
}

/** What a directory is, from its data. */
export function directoryKindOf(data: Buffer | undefined): DirectoryKind {
  if (!data || data.length === 0) return { kind: 'lock' };
  const text = data.toString('utf8');
  if (KAZOO_COUNT.test(text)) return { kind: 'kazoo-semaphore', maxLeases: Number(text) };
  const maxLeases = leaseCountOf(text);
  return maxLeases === null ? { kind: 'unknown' } : { kind: 'lease', maxLeases };
}

function leaseCountOf(text: string): number | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object') return null;
  const { kind, maxLeases } = parsed as Record<string, unknown>;
  if (kind !== LEASE_DIRECTORY_KIND || typeof maxLeases !== 'number' || !Number.isInteger(maxLeases) || maxLeases < 1)
    return null;
  return maxLeases;
}
