import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.Version;

/**
 * Apache Curator 5 (Debian's libcurator-recipes-java) as a benchmark worker, the Java side of
 * bench/workers/impl.protocol.ts as kazoo_bench.worker.py is the Python side. Built by
 * bench/support/curator-build.ts, run as: java -cp <classes>:<jars> CuratorBenchWorker
 * <connectionString> <baseZnode> <warmupMs>; then one JSON command per line on stdin, one
 * answer per line on stdout (slf4j-nop on the class path keeps the libraries' logs off it).
 *
 * Curator is used as its documentation shows: one CuratorFramework per session, one
 * InterProcessMutex / InterProcessReadWriteLock / InterProcessMultiLock /
 * InterProcessSemaphoreV2 per lock and contender, kept and reused, with blocking acquire()
 * and release(). Curator's locks belong to the thread that took them, so commands run one at
 * a time on the main thread (handoff.hold and handoff.release of one lock meet there); each
 * contender of a many-session op has a thread of its own (CuratorReadHeavy, CuratorLeases,
 * CuratorCapacity).
 *
 * Times are System.nanoTime(): CLOCK_MONOTONIC on Linux, as Node's process.hrtime.bigint()
 * (the orchestrator checks it at start-up). Requests and watch notifications are counted
 * under ZooKeeper's client API (CountingZooKeeper), in every op.
 */
public class CuratorBenchWorker {
    private static final PrintStream OUT = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
    private static String connection;
    private static String base;

    private CuratorSession handoff;
    private Map<String, Long> handoffStart;
    private InterProcessMutex handoffLock;
    private Drain drain;
    private CuratorCapacity capacity;

    public static void main(String[] args) throws Exception {
        connection = args[0];
        base = args[1];
        CuratorBenchWorker worker = new CuratorBenchWorker();
        worker.warmUp(args.length > 2 ? Long.parseLong(args[2]) : 0);
        send(BenchJson.obj("ready", true, "impl", "curator", "pid", ProcessHandle.current().pid(), "version", version()));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            Map<String, Object> command = BenchJson.map(new BenchJson(line).value());
            Object id = command.get("id");
            String op = (String) command.get("op");
            if ("quit".equals(op)) break;
            Map<String, Object> params = command.get("params") == null ? Map.of() : BenchJson.map(command.get("params"));
            try {
                send(BenchJson.obj("id", id, "result", worker.handle(op, params)));
            } catch (Throwable error) {
                send(BenchJson.obj("id", id, "error", CuratorSession.describe(error)));
            }
        }
        worker.close();
        System.exit(0); // Curator's and ZooKeeper's threads must not keep the JVM up
    }

    private static void send(Object message) {
        OUT.print(BenchJson.write(message) + "\n");
        OUT.flush();
    }

    private static String path(String name) {
        return base + "/" + name;
    }

    private static String version() throws Exception {
        Properties pom = new Properties();
        try (InputStream in = InterProcessMutex.class.getResourceAsStream("/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
            if (in != null) pom.load(in);
        }
        String zk = Version.getFullVersion().split("[-,]")[0];
        return "curator " + pom.getProperty("version", "5") + " (ZooKeeper client " + zk + ", Java " + Runtime.version().feature() + ")";
    }

    private static int integer(Map<String, Object> p, String key) {
        return ((Number) p.get(key)).intValue();
    }

    private Object handle(String op, Map<String, Object> p) throws Exception {
        String name = (String) p.get("name");
        switch (op) {
            case "clock": return BenchJson.obj("now", String.valueOf(System.nanoTime()));
            // The whole JVM (client, I/O, GC and JIT threads), as the other workers report their process.
            case "cpu": return BenchJson.obj("cpuNs", String.valueOf(CuratorSession.processCpuNs()));
            case "uncontended": return uncontended(name, integer(p, "cycles"), integer(p, "warmup"));
            case "handoff.open": return handoffOpen(name);
            case "handoff.hold": return handoffHold();
            case "handoff.release": return handoffRelease();
            case "handoff.close": return handoffClose();
            case "drain.setup": drain = new Drain(path(name), integer(p, "waiters")); return BenchJson.obj();
            case "drain.go": { Drain d = drain; drain = null; return d.go(); }
            case "readHeavy": return CuratorReadHeavy.run(connection, path(name), p);
            case "multiLock": return multiLock((String) p.get("prefix"), integer(p, "locks"), integer(p, "cycles"), integer(p, "warmup"));
            case "leases": return CuratorLeases.run(connection, path(name), p);
            case "capacity.setup": closeCapacity(); capacity = CuratorCapacity.setup(base, p); return BenchJson.obj();
            case "capacity.go": return capacity.go(p);
            case "capacity.close": closeCapacity(); return BenchJson.obj();
            default: throw new IllegalArgumentException(op + " is not supported by curator");
        }
    }

    /**
     * Every recipe's code path in a loop for `ms` before the ready line, so the JIT has
     * compiled them before the runner's warm-up round (a JVM starts interpreted; so does V8,
     * and the Node workers warm up the same way: bench/workers/impl.worker.ts). Names carry
     * the pid: two workers warm up at once.
     */
    private void warmUp(long ms) throws Exception {
        long until = System.nanoTime() + ms * 1_000_000L;
        String tag = "warmup-" + ProcessHandle.current().pid();
        Map<String, Object> leases = Map.of("contenders", 4, "maxLeases", 2, "holdMs", 0, "warmupGrants", 0, "grants", 100);
        Map<String, Object> readHeavy = Map.of("readers", 4, "durationMs", 300, "writerPauseMs", 5, "stallTimeoutMs", 500);
        while (System.nanoTime() < until) {
            uncontended(tag + "-u", 200, 0);
            multiLock(tag + "-m", 5, 20, 0);
            CuratorLeases.run(connection, path(tag + "-l"), leases);
            CuratorReadHeavy.run(connection, path(tag + "-r"), readHeavy);
        }
    }

    // Scenario 1
    private Object uncontended(String name, int cycles, int warmup) throws Exception {
        try (CuratorSession zk = new CuratorSession(connection)) {
            InterProcessMutex lock = new InterProcessMutex(zk.client, path(name));
            for (int i = 0; i < warmup; i++) {
                lock.acquire();
                lock.release();
            }
            Map<String, Long> before = zk.snapshot();
            long start = System.nanoTime();
            for (int i = 0; i < cycles; i++) {
                lock.acquire();
                lock.release();
            }
            long elapsed = System.nanoTime() - start;
            return BenchJson.obj("cycles", cycles, "elapsedNs", elapsed, "counts", CuratorSession.delta(before, zk.snapshot()));
        }
    }

    // Scenario 2: hold and release both run on the main thread, which then owns the lock.
    private Object handoffOpen(String name) throws Exception {
        handoff = new CuratorSession(connection);
        handoffLock = new InterProcessMutex(handoff.client, path(name));
        handoffStart = handoff.snapshot();
        return BenchJson.obj();
    }

    private Object handoffHold() throws Exception {
        handoffLock.acquire();
        return BenchJson.obj("grantedAt", String.valueOf(System.nanoTime()));
    }

    private Object handoffRelease() throws Exception {
        long releasedAt = System.nanoTime();
        handoffLock.release();
        return BenchJson.obj("releasedAt", String.valueOf(releasedAt));
    }

    private Object handoffClose() {
        Object result = BenchJson.obj("counts", CuratorSession.delta(handoffStart, handoff.snapshot()));
        handoff.close();
        handoff = null;
        return result;
    }

    /**
     * Scenario 7: `all` is one InterProcessMultiLock over `locks` names (it acquires them
     * one after another and releases them in reverse); `seq` the same by hand with one
     * InterProcessMutex per name; `one` a single name. In turns, a fresh order each cycle.
     */
    private Object multiLock(String prefix, int locks, int cycles, int warmup) throws Exception {
        try (CuratorSession zk = new CuratorSession(connection)) {
            List<String> allPaths = new ArrayList<>();
            List<InterProcessMutex> seq = new ArrayList<>();
            for (int i = 0; i < locks; i++) {
                allPaths.add(path(prefix + "-all-" + i));
                seq.add(new InterProcessMutex(zk.client, path(prefix + "-seq-" + i)));
            }
            InterProcessMultiLock all = new InterProcessMultiLock(zk.client, allPaths);
            List<InterProcessMutex> one = List.of(new InterProcessMutex(zk.client, path(prefix + "-one")));
            Map<String, CuratorSession.Step> variants = new LinkedHashMap<>();
            variants.put("all", () -> {
                all.acquire();
                all.release();
            });
            variants.put("seq", () -> inTurn(seq));
            variants.put("one", () -> inTurn(one));
            Map<String, List<Long>> latencies = new LinkedHashMap<>();
            Map<String, Map<String, Long>> counts = new LinkedHashMap<>();
            for (String v : variants.keySet()) {
                latencies.put(v, new ArrayList<>());
                counts.put(v, new HashMap<>());
            }
            List<String> order = new ArrayList<>(variants.keySet());
            for (int i = 0; i < warmup + cycles; i++) {
                Collections.shuffle(order);
                for (String v : order) {
                    Map<String, Long> before = zk.snapshot();
                    long start = System.nanoTime();
                    variants.get(v).run();
                    long elapsed = System.nanoTime() - start;
                    if (i < warmup) continue;
                    latencies.get(v).add(elapsed);
                    CuratorSession.add(counts.get(v), CuratorSession.delta(before, zk.snapshot()));
                }
            }
            Map<String, Object> runs = new LinkedHashMap<>();
            for (String v : variants.keySet()) runs.put(v, BenchJson.obj("latenciesNs", latencies.get(v), "counts", counts.get(v)));
            return BenchJson.obj("variants", runs);
        }
    }

    private static void inTurn(List<InterProcessMutex> locks) throws Exception {
        for (InterProcessMutex lock : locks) lock.acquire();
        for (int i = locks.size() - 1; i >= 0; i--) locks.get(i).release();
    }

    private void closeCapacity() {
        if (capacity != null) capacity.close();
        capacity = null;
    }

    private void close() {
        closeCapacity();
        if (handoff != null) handoff.close();
        if (drain != null) CuratorSession.closeAll(drain.sessions);
    }

    /** Scenario 3: a holder (the main thread) and N waiters, each its own session and thread. */
    private static final class Drain {
        final List<CuratorSession> sessions;
        final InterProcessMutex holder;
        final long[] ends;
        final List<Thread> threads = new ArrayList<>();
        final List<String> errors = Collections.synchronizedList(new ArrayList<>());

        Drain(String path, int waiters) throws Exception {
            sessions = CuratorSession.startAll(connection, waiters + 1);
            holder = new InterProcessMutex(sessions.get(0).client, path);
            try {
                holder.acquire();
            } catch (Exception error) {
                CuratorSession.closeAll(sessions);
                throw error;
            }
            ends = new long[waiters];
            for (int i = 0; i < waiters; i++) {
                int n = i;
                InterProcessMutex lock = new InterProcessMutex(sessions.get(n + 1).client, path);
                // Each waiter releases as soon as it is granted; its release's end marks its turn done.
                threads.add(CuratorSession.thread(errors, () -> {
                    lock.acquire();
                    lock.release();
                    ends[n] = System.nanoTime();
                }));
            }
        }

        Object go() throws Exception {
            try {
                List<Map<String, Long>> before = CuratorSession.snapshots(sessions);
                long start = System.nanoTime();
                holder.release();
                CuratorSession.joinAll(threads, errors, "waiters");
                long last = Long.MIN_VALUE;
                for (long end : ends) last = Math.max(last, end);
                return BenchJson.obj("drainNs", last - start, "counts", CuratorSession.sum(before, CuratorSession.snapshots(sessions)));
            } finally {
                CuratorSession.closeAll(sessions);
            }
        }
    }
}
