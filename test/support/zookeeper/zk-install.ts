import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import { installDebianPackage } from '../debian-package';

const DEBIAN_JAR = '/usr/share/java/zookeeper.jar';
const DEBIAN_LOGGER = '/usr/share/java/slf4j-simple.jar';
const INSTALL_HINT =
  'ZooKeeper is needed to run the tests. Install it with `sudo apt-get install -y zookeeper` (Debian/Ubuntu), ' +
  'or set ZOOKEEPER_HOME to an Apache ZooKeeper 3.5+ distribution, or set ZK_CONNECT=host:port to use a running server.';

/** Where ZooKeeper's jars are: ZOOKEEPER_HOME, else Debian's package (installed here if we can). */
export function zookeeperClasspath(): string {
  const home = process.env.ZOOKEEPER_HOME;
  if (home) return homeClasspath(home);
  if (!existsSync(DEBIAN_JAR)) installDebianPackage('zookeeper', DEBIAN_JAR, INSTALL_HINT);
  // Without an SLF4J binding on the classpath the server fails silently.
  return [DEBIAN_JAR, DEBIAN_LOGGER].join(':');
}

function homeClasspath(home: string): string {
  const dirs = [home, join(home, 'lib')].filter(existsSync);
  const jars = dirs.flatMap((dir) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.jar'))
      .map((f) => join(dir, f)),
  );
  if (!jars.some((jar) => /zookeeper-\d/.test(jar) || jar.endsWith('zookeeper.jar'))) {
    throw new Error(`ZOOKEEPER_HOME=${home} holds no zookeeper jar. ${INSTALL_HINT}`);
  }
  return jars.join(':');
}
