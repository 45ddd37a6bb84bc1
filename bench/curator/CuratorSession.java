import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * One session: a started CuratorFramework, built as Curator's documentation shows
 * (ExponentialBackoffRetry(1000, 3), default timeouts), with a ZooKeeper handle that counts
 * what it sends and the watch events it delivers (CountingZooKeeper); plus the helpers every
 * op shares, as kazoo_counted.py is for the Kazoo worker.
 */
public final class CuratorSession implements AutoCloseable {
    public interface Step { void run() throws Exception; }

    private final CountingZooKeeper.Counter counter = new CountingZooKeeper.Counter();
    public final CuratorFramework client;

    public CuratorSession(String connection) throws InterruptedException {
        client = CuratorFrameworkFactory.builder()
            .connectString(connection)
            .retryPolicy(new ExponentialBackoffRetry(1000, 3))
            .zookeeperFactory(new CountingZooKeeper.Factory(counter))
            .build();
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
            client.close();
            throw new IllegalStateException("Curator could not connect to " + connection);
        }
        // Connecting includes the EnsembleTracker's reads of /zookeeper/config, sent in the
        // background: one when it starts, one on the CONNECTED event. Both are counted before
        // any op's first snapshot, so neither lands inside a measured window.
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        while (counter.snapshot().getOrDefault("getConfig", 0L) < 2 && System.nanoTime() < until) Thread.sleep(1);
    }

    public Map<String, Long> snapshot() {
        return counter.snapshot();
    }

    @Override
    public void close() {
        client.close();
    }

    /** n started sessions, started in parallel; none left open if one fails. */
    public static List<CuratorSession> startAll(String connection, int n) throws Exception {
        return startAll(Collections.nCopies(n, connection));
    }

    /** A started session on each connection string, started in parallel, in that order; none left open if one fails. */
    public static List<CuratorSession> startAll(List<String> connections) throws Exception {
        int n = connections.size();
        CuratorSession[] sessions = new CuratorSession[n];
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            threads.add(thread(errors, () -> sessions[k] = new CuratorSession(connections.get(k))));
        }
        for (Thread t : threads) t.join();
        List<CuratorSession> started = new ArrayList<>();
        for (CuratorSession s : sessions) if (s != null) started.add(s);
        if (!errors.isEmpty()) {
            closeAll(started);
            throw new IllegalStateException("a Curator client failed to start: " + errors.get(0));
        }
        return started;
    }

    public static void closeAll(Collection<CuratorSession> sessions) {
        for (CuratorSession s : sessions) s.close();
    }

    /** A started thread running `step`; what it throws lands in `errors`. */
    public static Thread thread(List<String> errors, Step step) {
        Thread t = new Thread(() -> {
            try {
                step.run();
            } catch (Throwable error) {
                errors.add(describe(error));
            }
        });
        t.start();
        return t;
    }

    public static void joinAll(List<Thread> threads, List<String> errors, String what) throws InterruptedException {
        for (Thread t : threads) t.join();
        if (!errors.isEmpty()) throw new IllegalStateException(what + " failed: " + String.join("; ", errors));
    }

    /** This JVM's CPU time so far (every thread: client, I/O, GC and JIT), in nanoseconds. */
    public static long processCpuNs() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    public static List<Map<String, Long>> snapshots(List<CuratorSession> sessions) {
        List<Map<String, Long>> out = new ArrayList<>();
        for (CuratorSession s : sessions) out.add(s.snapshot());
        return out;
    }

    /** `after - before`, per op, zeros dropped. */
    public static Map<String, Long> delta(Map<String, Long> before, Map<String, Long> after) {
        Map<String, Long> out = new HashMap<>();
        after.forEach((op, n) -> {
            long d = n - before.getOrDefault(op, 0L);
            if (d != 0) out.put(op, d);
        });
        return out;
    }

    public static Map<String, Long> add(Map<String, Long> into, Map<String, Long> more) {
        more.forEach((op, n) -> into.merge(op, n, Long::sum));
        return into;
    }

    /** Every session's delta between two snapshots of all, summed. */
    public static Map<String, Long> sum(List<Map<String, Long>> before, List<Map<String, Long>> after) {
        Map<String, Long> out = new HashMap<>();
        for (int i = 0; i < before.size(); i++) add(out, delta(before.get(i), after.get(i)));
        return out;
    }

    /** The error and where it came from, for the orchestrator's message. */
    public static String describe(Throwable error) {
        StringBuilder b = new StringBuilder(error.toString());
        StackTraceElement[] stack = error.getStackTrace();
        for (int i = 0; i < Math.min(4, stack.length); i++) b.append("\n    at ").append(stack[i]);
        return b.toString();
    }
}
