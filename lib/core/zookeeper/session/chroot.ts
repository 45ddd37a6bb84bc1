/** The chroot of a connection string (`host:port,host:port/chroot`), if any: the client prepends it to every path. */
export function chrootOf(connectionString: string): string | undefined {
  return connectionString.includes('/') ? connectionString.slice(connectionString.indexOf('/')) : undefined;
}
