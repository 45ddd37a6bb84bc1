/** Stops the ZooKeeper the global setup started, and deletes its data. */
export default async function globalTeardown(): Promise<void> {
  await globalThis.__ZK_SERVER__?.destroy();
}
