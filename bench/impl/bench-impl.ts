import type { ZkLockBackend } from '../../lib/core/zookeeper/zk-lock-backend.js';
import type { Counts, WorkerOp } from '../workers/impl.protocol.js';

/** One implementation as a Node worker hosts it: a handler per protocol op it supports. */
export interface BenchImpl {
  readonly version: string;
  readonly ops: Partial<Record<WorkerOp, (params: any) => Promise<unknown>>>;
  /** Closes whatever sessions are still open. */
  close(): Promise<void>;
}

/** CLOCK_MONOTONIC now, in nanoseconds (see impl.protocol.ts). */
export const now = (): bigint => process.hrtime.bigint();

/** This process's CPU time so far (user + system, every thread), in nanoseconds. */
export function ownCpuNs(): number {
  const { user, system } = process.cpuUsage(); // µs
  return (user + system) * 1000;
}

export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** How an op of ours opens and closes its sessions: each tracked, so the worker's close ends any left open. */
export interface OursSessions {
  /** `server`: a connection string of its own (default: the worker's). */
  open(server?: string): Promise<ZkLockBackend>;
  close(backend: ZkLockBackend): Promise<void>;
}

/** The library's own request counter (notifications included). */
export function counts(backend: ZkLockBackend): Counts {
  return backend.client.counter.snapshot();
}
