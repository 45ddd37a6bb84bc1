import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * Scenario 10 on Curator: this process's share of C sessions, each a CuratorFramework on one
 * server (the orchestrator spreads them over the ensemble) with an InterProcessMutex of its
 * own, kept and reused; in `go` each loops acquire() + release() on a thread of its own, as a
 * Curator application serving many requests would, while the main thread reads the JVM's CPU
 * time at the window's ends. The Node workers do the same (bench/impl/capacity-sessions.ts).
 */
final class CuratorCapacity {
    private final List<CuratorSession> sessions;
    private final List<InterProcessMutex> locks = new ArrayList<>();

    private CuratorCapacity(List<CuratorSession> sessions) {
        this.sessions = sessions;
    }

    /** Connects every session and runs one cycle on each (the lock's parents made, first use paid for). */
    static CuratorCapacity setup(String base, Map<String, Object> p) throws Exception {
        String prefix = (String) p.get("prefix");
        List<String> servers = new ArrayList<>();
        List<String> paths = new ArrayList<>();
        for (Object item : (List<?>) p.get("sessions")) {
            Map<String, Object> session = BenchJson.map(item);
            servers.add((String) session.get("server"));
            paths.add(base + "/" + prefix + "-" + session.get("index"));
        }
        CuratorCapacity capacity = new CuratorCapacity(CuratorSession.startAll(servers));
        try {
            for (int i = 0; i < paths.size(); i++) {
                InterProcessMutex lock = new InterProcessMutex(capacity.sessions.get(i).client, paths.get(i));
                lock.acquire();
                lock.release();
                capacity.locks.add(lock);
            }
        } catch (Exception error) {
            capacity.close();
            throw error;
        }
        return capacity;
    }

    Object go(Map<String, Object> p) throws Exception {
        long start = Long.parseLong((String) p.get("windowStartNs"));
        long end = Long.parseLong((String) p.get("windowEndNs"));
        int n = locks.size();
        long[] cycles = new long[n];
        long[] windowCycles = new long[n];
        List<Map<String, Long>> before = CuratorSession.snapshots(sessions);
        List<String> errors = Collections.synchronizedList(new ArrayList<>());
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int k = i;
            InterProcessMutex lock = locks.get(k);
            threads.add(CuratorSession.thread(errors, () -> {
                for (;;) {
                    lock.acquire();
                    lock.release();
                    long at = System.nanoTime();
                    cycles[k]++;
                    if (at >= start && at < end) windowCycles[k]++;
                    if (at >= end) return;
                }
            }));
        }
        sleepUntil(start);
        long cpuStart = CuratorSession.processCpuNs();
        long sampledStart = System.nanoTime();
        sleepUntil(end);
        long cpuEnd = CuratorSession.processCpuNs();
        long sampledEnd = System.nanoTime();
        CuratorSession.joinAll(threads, errors, "sessions");
        long total = 0, window = 0;
        for (int i = 0; i < n; i++) {
            total += cycles[i];
            window += windowCycles[i];
        }
        return BenchJson.obj(
            "windowCycles", window,
            "cycles", total,
            "counts", CuratorSession.sum(before, CuratorSession.snapshots(sessions)),
            "windowCpuNs", cpuEnd - cpuStart,
            "windowSampledNs", sampledEnd - sampledStart);
    }

    void close() {
        CuratorSession.closeAll(sessions);
    }

    private static void sleepUntil(long nanoTime) throws InterruptedException {
        long left = nanoTime - System.nanoTime();
        if (left > 0) TimeUnit.NANOSECONDS.sleep(left);
    }
}
