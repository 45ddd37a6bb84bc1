import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;

/**
 * Scenario 6 on Curator: R reader sessions loop on the read lock of one
 * InterProcessReadWriteLock path while a writer session takes its write lock every
 * `writerPauseMs`, each with one lock object kept and reused on a thread of its own. Every
 * acquire gives up after `stallTimeoutMs` (Curator's acquire(time, unit)), as in every worker.
 */
final class CuratorReadHeavy {
    private CuratorReadHeavy() {}

    static Object run(String connection, String path, Map<String, Object> p) throws Exception {
        int readers = ((Number) p.get("readers")).intValue();
        long stallMs = ((Number) p.get("stallTimeoutMs")).longValue();
        long pauseMs = ((Number) p.get("writerPauseMs")).longValue();
        List<CuratorSession> sessions = CuratorSession.startAll(connection, readers + 1);
        try {
            CountDownLatch stopped = new CountDownLatch(1);
            long[] readerCycles = new long[readers];
            long[] stalls = new long[readers + 1];
            long[] counted = new long[readers + 1];
            List<Long> waits = Collections.synchronizedList(new ArrayList<>());
            List<String> errors = Collections.synchronizedList(new ArrayList<>());
            List<Map<String, Long>> before = CuratorSession.snapshots(sessions);
            long start = System.nanoTime();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < readers; i++) {
                int n = i;
                InterProcessMutex lock = new InterProcessReadWriteLock(sessions.get(n).client, path).readLock();
                threads.add(CuratorSession.thread(errors, () -> {
                    while (stopped.getCount() > 0) {
                        if (!lock.acquire(stallMs, TimeUnit.MILLISECONDS)) {
                            stalls[n]++;
                            continue;
                        }
                        lock.release();
                        if (stopped.getCount() > 0) readerCycles[n]++;
                        counted[n]++;
                    }
                }));
            }
            InterProcessMutex writer = new InterProcessReadWriteLock(sessions.get(readers).client, path).writeLock();
            threads.add(CuratorSession.thread(errors, () -> {
                while (!stopped.await(pauseMs, TimeUnit.MILLISECONDS)) {
                    long asked = System.nanoTime();
                    boolean granted = writer.acquire(stallMs, TimeUnit.MILLISECONDS);
                    waits.add(System.nanoTime() - asked);
                    if (!granted) {
                        stalls[readers]++;
                        continue;
                    }
                    writer.release();
                    counted[readers]++;
                }
            }));
            Thread.sleep(((Number) p.get("durationMs")).longValue());
            stopped.countDown();
            long elapsed = System.nanoTime() - start;
            CuratorSession.joinAll(threads, errors, "read-heavy");
            long readerStalls = 0;
            for (int i = 0; i < readers; i++) readerStalls += stalls[i];
            return BenchJson.obj(
                "readerCycles", sum(readerCycles),
                "elapsedNs", elapsed,
                "writerWaitsNs", new ArrayList<>(waits),
                "readerStalls", readerStalls,
                "writerStalls", stalls[readers],
                "counts", CuratorSession.sum(before, CuratorSession.snapshots(sessions)),
                "countedCycles", sum(counted));
        } finally {
            CuratorSession.closeAll(sessions);
        }
    }

    private static long sum(long[] values) {
        long total = 0;
        for (long v : values) total += v;
        return total;
    }
}
