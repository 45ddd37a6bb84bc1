import type { TrialCheck } from '../../bench/peers/faults/overlap-checker';

/** A fault trial's check for the report and summary specs: a clean trial (both granted, no overlap, no stale write), with `over` applied. */
export const trialCheck = (over: Partial<TrialCheck> = {}): TrialCheck => ({
  aGranted: true,
  bGranted: true,
  bFailed: false,
  overlapped: false,
  overlapMs: 0,
  toldFirst: null,
  staleWrites: { fenced: { landed: 0, refused: 0 }, unfenced: { landed: 0 } },
  ...over,
});
