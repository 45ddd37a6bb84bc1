import type { WorkerOp } from '../workers/impl.protocol.js';

/** One implementation as a Node worker hosts it: a handler per protocol op it supports. */
export interface BenchImpl {
  readonly version: string;
  readonly ops: Partial<Record<WorkerOp, (params: any) => Promise<unknown>>>;
  /** Closes whatever sessions are still open. */
  close(): Promise<void>;
}

/** CLOCK_MONOTONIC now, in nanoseconds (see impl.protocol.ts). */
export const now = (): bigint => process.hrtime.bigint();

export const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
