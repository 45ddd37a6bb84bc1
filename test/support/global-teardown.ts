/** Stops the ZooKeeper and the PostgreSQL the global setup started, and deletes their data. */
export default async function globalTeardown(): Promise<void> {
  await Promise.all([globalThis.__ZK_SERVER__?.destroy(), globalThis.__PG_SERVER__?.destroy()]);
}
