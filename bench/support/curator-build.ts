import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';

const JAVA_DIR = '/usr/share/java';
/** Debian's Curator 5 (libcurator-recipes-java) and what it needs; slf4j-nop keeps the worker's stdout to answers. */
const JARS = [
  'curator-recipes',
  'curator-framework',
  'curator-client',
  'zookeeper',
  'zookeeper-jute',
  'guava',
  'slf4j-api',
  'slf4j-nop',
];
const SOURCES = join(__dirname, '..', 'curator');
const INSTALL = 'apt-get install -y libcurator-recipes-java openjdk-17-jdk-headless';

/** The Curator worker, compiled: run `java -cp <classpath> CuratorBenchWorker …`. */
export interface CuratorBuild {
  readonly classpath: string;
  readonly mainClass: 'CuratorBenchWorker';
  /** Deletes the compiled classes. */
  dispose(): void;
}

/** `name` on PATH, or undefined. */
function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}

/**
 * Compiles bench/curator/*.java against Debian's Curator jars into a fresh temporary
 * directory, once per run (a few seconds; both worker processes then start from classes).
 * Fails with what to install when Java's compiler or a jar is missing. Asynchronous: javac
 * takes several seconds on a busy machine, and the orchestrator's own ZooKeeper session
 * (the queue probe) must go on answering pings meanwhile, or a short session expires.
 */
export async function buildCuratorWorker(): Promise<CuratorBuild> {
  const jars = JARS.map((jar) => join(JAVA_DIR, `${jar}.jar`));
  const missing = jars.filter((jar) => !existsSync(jar));
  const [java, javac] = [onPath('java'), onPath('javac')];
  if (!java || !javac || missing.length) {
    const what = [...(!java || !javac ? ['a Java 17 JDK (java and javac on PATH)'] : []), ...missing];
    throw new Error(
      `the "curator" implementation needs Apache Curator 5 and a JDK; missing: ${what.join(', ')}. Install them with: ${INSTALL}`,
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-curator-'));
  const classpath = jars.join(':');
  const sources = readdirSync(SOURCES)
    .filter((f) => f.endsWith('.java'))
    .map((f) => join(SOURCES, f));
  try {
    // -implicit:none: a jar on Debian's class path carries an annotation's source; do not compile it.
    await promisify(execFile)(javac, ['-d', dir, '-implicit:none', '-nowarn', '-cp', classpath, ...sources]);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (error as { stderr?: string }).stderr?.trim();
    throw new Error(
      `compiling the Curator worker failed (${INSTALL} provides Java 17 and Curator 5): ${stderr || String(error)}`,
    );
  }
  return {
    classpath: `${dir}:${classpath}`,
    mainClass: 'CuratorBenchWorker',
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
