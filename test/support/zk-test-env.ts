import { randomBytes } from 'node:crypto';

/** The server the test run uses: ZK_CONNECT, set by the global setup or by the user. */
export function zkConnect(): string {
  const value = process.env.ZK_CONNECT;
  if (!value) throw new Error('ZK_CONNECT is not set: run the tests through `npm test` (it starts ZooKeeper).');
  return value;
}

/** A root znode of its own for one suite, so suites never see each other's nodes. */
export function uniqueRoot(suite: string): string {
  return `/test-${suite}-${randomBytes(4).toString('hex')}`;
}

/** The port of the standalone server started for this run (for four-letter commands). */
export function zkPort(): number {
  return Number(zkConnect().split(',')[0].split(':')[1]);
}
