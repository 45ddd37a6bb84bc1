import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;

/**
 * Scenario 8 on Curator: `contenders` sessions loop on one InterProcessSemaphoreV2 of
 * `maxLeases` (one object per contender, kept and reused, blocking acquire() and
 * returnLease()), each taking a lease, holding it `holdMs`, returning it.
 *
 * The window opens at grant number `warmupGrants` and closes after `grants` more grants, or
 * `durationMs` after it opened; every session's counts are taken at both ends, so per grant
 * they are a steady state's (as bench/support/grant-window.ts and kazoo_leases.py).
 */
final class CuratorLeases {
    private final List<CuratorSession> sessions;
    private final long warmupGrants;
    private final Long grants;
    private long granted, first, last, startAt, endAt;
    private int holding, maxHolding;
    private List<Map<String, Long>> before, after;
    private volatile boolean stopped;
    private final CountDownLatch opened = new CountDownLatch(1);
    private final CountDownLatch closed = new CountDownLatch(1);

    private CuratorLeases(List<CuratorSession> sessions, long warmupGrants, Long grants) {
        this.sessions = sessions;
        this.warmupGrants = warmupGrants;
        this.grants = grants;
        if (warmupGrants == 0) open();
    }

    static Object run(String connection, String path, Map<String, Object> p) throws Exception {
        int contenders = ((Number) p.get("contenders")).intValue();
        int maxLeases = ((Number) p.get("maxLeases")).intValue();
        long holdMs = ((Number) p.get("holdMs")).longValue();
        Long grants = p.get("grants") == null ? null : ((Number) p.get("grants")).longValue();
        Number durationMs = (Number) p.get("durationMs");
        List<CuratorSession> sessions = CuratorSession.startAll(connection, contenders);
        try {
            CuratorLeases window = new CuratorLeases(sessions, ((Number) p.get("warmupGrants")).longValue(), grants);
            List<String> errors = Collections.synchronizedList(new ArrayList<>());
            List<Thread> threads = new ArrayList<>();
            for (CuratorSession session : sessions) {
                InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(session.client, path, maxLeases);
                threads.add(CuratorSession.thread(errors, () -> {
                    try {
                        while (!window.stopped) {
                            Lease lease = semaphore.acquire();
                            window.onGrant();
                            if (holdMs > 0) Thread.sleep(holdMs);
                            window.onRelease();
                            semaphore.returnLease(lease);
                        }
                    } catch (Exception error) {
                        window.close(); // the others stop too; the error is what the run reports
                        throw error;
                    }
                }));
            }
            if (durationMs != null) {
                while (!window.opened.await(100, TimeUnit.MILLISECONDS) && !window.stopped) {
                    // a contender that failed first closes the window unopened
                }
                window.closed.await(durationMs.longValue(), TimeUnit.MILLISECONDS);
                window.close();
            }
            CuratorSession.joinAll(threads, errors, "contenders");
            return window.result();
        } finally {
            CuratorSession.closeAll(sessions);
        }
    }

    private synchronized void onGrant() {
        maxHolding = Math.max(maxHolding, ++holding);
        granted++;
        if (granted == warmupGrants) open();
        else if (grants != null && granted == warmupGrants + grants) closeNow();
    }

    private synchronized void onRelease() {
        holding--;
    }

    private synchronized void close() {
        if (!stopped) closeNow();
    }

    private void open() {
        before = CuratorSession.snapshots(sessions);
        first = granted;
        startAt = System.nanoTime();
        opened.countDown();
    }

    private void closeNow() {
        endAt = System.nanoTime();
        after = CuratorSession.snapshots(sessions);
        last = granted;
        stopped = true;
        closed.countDown();
    }

    private synchronized Object result() {
        if (before == null || after == null) throw new IllegalStateException("the grant window never opened (" + granted + " grants, " + warmupGrants + " to warm up)");
        return BenchJson.obj("grants", last - first, "elapsedNs", endAt - startAt, "counts", CuratorSession.sum(before, after), "maxHolding", maxHolding);
    }
}
