import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.curator.utils.ZookeeperFactory;
import org.apache.zookeeper.AsyncCallback;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.admin.ZooKeeperAdmin;
import org.apache.zookeeper.client.ZKClientConfig;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The ZooKeeper handle Curator gets from CuratorFrameworkFactory.builder().zookeeperFactory(...):
 * Curator's own default (a ZooKeeperAdmin), counting each request it sends by the op names
 * the library's counter uses (delete is "remove"), and each watch event it hands to a watcher
 * ("notification"). Pings and the session's close are not requests of any lock operation and
 * go around these methods.
 *
 * Several overloads call one another; a per-thread depth makes only the outermost call count.
 * Watchers are wrapped to count the events they get; a wrapper equals another wrapping an
 * equal watcher, so ZooKeeper's watch sets (and Curator's removeWatches) see what they would
 * without it, and one event wakes each watcher once, as before. Curator registers one watcher
 * per node and session in these recipes, so that is one per event the server sends.
 */
public class CountingZooKeeper extends ZooKeeperAdmin {
    /** Counts by op name; shared by every handle of one session (Curator makes a new one after an expiry). */
    public static final class Counter {
        private final Map<String, Long> counts = new HashMap<>();

        public synchronized void count(String op) {
            counts.merge(op, 1L, Long::sum);
        }

        public synchronized Map<String, Long> snapshot() {
            return new HashMap<>(counts);
        }
    }

    public static final class Factory implements ZookeeperFactory {
        private final Counter counter;

        public Factory(Counter counter) {
            this.counter = counter;
        }

        @Override
        public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly) throws Exception {
            return new CountingZooKeeper(counter, connectString, sessionTimeout, watcher, canBeReadOnly, null);
        }

        @Override
        public ZooKeeper newZooKeeper(String connectString, int sessionTimeout, Watcher watcher, boolean canBeReadOnly, ZKClientConfig config) throws Exception {
            return new CountingZooKeeper(counter, connectString, sessionTimeout, watcher, canBeReadOnly, config);
        }
    }

    static final class CountingWatcher implements Watcher {
        final Counter counter;
        final Watcher inner;

        CountingWatcher(Counter counter, Watcher inner) {
            this.counter = counter;
            this.inner = inner;
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() != Event.EventType.None) counter.count("notification"); // None: the connection's own state
            inner.process(event);
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof CountingWatcher && inner.equals(((CountingWatcher) other).inner);
        }

        @Override
        public int hashCode() {
            return inner.hashCode();
        }
    }

    interface Call<T> { T call() throws KeeperException, InterruptedException; }

    private static final ThreadLocal<int[]> DEPTH = ThreadLocal.withInitial(() -> new int[1]);
    private final Counter counter;

    private CountingZooKeeper(Counter counter, String connect, int timeout, Watcher watcher, boolean readOnly, ZKClientConfig config) throws java.io.IOException {
        super(connect, timeout, wrap(counter, watcher), readOnly, config == null ? new ZKClientConfig() : config);
        this.counter = counter;
    }

    private static Watcher wrap(Counter counter, Watcher watcher) {
        return watcher == null || watcher instanceof CountingWatcher ? watcher : new CountingWatcher(counter, watcher);
    }

    private Watcher w(Watcher watcher) {
        return wrap(counter, watcher);
    }

    private <T> T c(String op, Call<T> call) throws KeeperException, InterruptedException {
        int[] depth = DEPTH.get();
        if (depth[0]++ == 0) counter.count(op);
        try {
            return call.call();
        } finally {
            depth[0]--;
        }
    }

    private void a(String op, Runnable call) {
        int[] depth = DEPTH.get();
        if (depth[0]++ == 0) counter.count(op);
        try {
            call.run();
        } finally {
            depth[0]--;
        }
    }

    // create
    @Override public String create(String p, byte[] d, List<ACL> acl, CreateMode m) throws KeeperException, InterruptedException { return c("create", () -> super.create(p, d, acl, m)); }
    @Override public String create(String p, byte[] d, List<ACL> acl, CreateMode m, Stat s) throws KeeperException, InterruptedException { return c("create", () -> super.create(p, d, acl, m, s)); }
    @Override public String create(String p, byte[] d, List<ACL> acl, CreateMode m, Stat s, long ttl) throws KeeperException, InterruptedException { return c("create", () -> super.create(p, d, acl, m, s, ttl)); }
    @Override public void create(String p, byte[] d, List<ACL> acl, CreateMode m, AsyncCallback.StringCallback cb, Object ctx) { a("create", () -> super.create(p, d, acl, m, cb, ctx)); }
    @Override public void create(String p, byte[] d, List<ACL> acl, CreateMode m, AsyncCallback.Create2Callback cb, Object ctx) { a("create", () -> super.create(p, d, acl, m, cb, ctx)); }
    @Override public void create(String p, byte[] d, List<ACL> acl, CreateMode m, AsyncCallback.Create2Callback cb, Object ctx, long ttl) { a("create", () -> super.create(p, d, acl, m, cb, ctx, ttl)); }
    // delete, multi, setData, sync
    @Override public void delete(String p, int v) throws KeeperException, InterruptedException { c("remove", () -> { super.delete(p, v); return null; }); }
    @Override public void delete(String p, int v, AsyncCallback.VoidCallback cb, Object ctx) { a("remove", () -> super.delete(p, v, cb, ctx)); }
    @Override public List<OpResult> multi(Iterable<Op> ops) throws KeeperException, InterruptedException { return c("multi", () -> super.multi(ops)); }
    @Override public void multi(Iterable<Op> ops, AsyncCallback.MultiCallback cb, Object ctx) { a("multi", () -> super.multi(ops, cb, ctx)); }
    @Override public Stat setData(String p, byte[] d, int v) throws KeeperException, InterruptedException { return c("setData", () -> super.setData(p, d, v)); }
    @Override public void setData(String p, byte[] d, int v, AsyncCallback.StatCallback cb, Object ctx) { a("setData", () -> super.setData(p, d, v, cb, ctx)); }
    @Override public void sync(String p, AsyncCallback.VoidCallback cb, Object ctx) { a("sync", () -> super.sync(p, cb, ctx)); }
    // exists
    @Override public Stat exists(String p, Watcher x) throws KeeperException, InterruptedException { return c("exists", () -> super.exists(p, w(x))); }
    @Override public Stat exists(String p, boolean x) throws KeeperException, InterruptedException { return c("exists", () -> super.exists(p, x)); }
    @Override public void exists(String p, Watcher x, AsyncCallback.StatCallback cb, Object ctx) { a("exists", () -> super.exists(p, w(x), cb, ctx)); }
    @Override public void exists(String p, boolean x, AsyncCallback.StatCallback cb, Object ctx) { a("exists", () -> super.exists(p, x, cb, ctx)); }
    // getData
    @Override public byte[] getData(String p, Watcher x, Stat s) throws KeeperException, InterruptedException { return c("getData", () -> super.getData(p, w(x), s)); }
    @Override public byte[] getData(String p, boolean x, Stat s) throws KeeperException, InterruptedException { return c("getData", () -> super.getData(p, x, s)); }
    @Override public void getData(String p, Watcher x, AsyncCallback.DataCallback cb, Object ctx) { a("getData", () -> super.getData(p, w(x), cb, ctx)); }
    @Override public void getData(String p, boolean x, AsyncCallback.DataCallback cb, Object ctx) { a("getData", () -> super.getData(p, x, cb, ctx)); }
    // getConfig (Curator's EnsembleTracker, twice a session as it connects)
    @Override public byte[] getConfig(Watcher x, Stat s) throws KeeperException, InterruptedException { return c("getConfig", () -> super.getConfig(w(x), s)); }
    @Override public byte[] getConfig(boolean x, Stat s) throws KeeperException, InterruptedException { return c("getConfig", () -> super.getConfig(x, s)); }
    @Override public void getConfig(Watcher x, AsyncCallback.DataCallback cb, Object ctx) { a("getConfig", () -> super.getConfig(w(x), cb, ctx)); }
    @Override public void getConfig(boolean x, AsyncCallback.DataCallback cb, Object ctx) { a("getConfig", () -> super.getConfig(x, cb, ctx)); }
    // getChildren
    @Override public List<String> getChildren(String p, Watcher x) throws KeeperException, InterruptedException { return c("getChildren", () -> super.getChildren(p, w(x))); }
    @Override public List<String> getChildren(String p, boolean x) throws KeeperException, InterruptedException { return c("getChildren", () -> super.getChildren(p, x)); }
    @Override public List<String> getChildren(String p, Watcher x, Stat s) throws KeeperException, InterruptedException { return c("getChildren", () -> super.getChildren(p, w(x), s)); }
    @Override public List<String> getChildren(String p, boolean x, Stat s) throws KeeperException, InterruptedException { return c("getChildren", () -> super.getChildren(p, x, s)); }
    @Override public void getChildren(String p, Watcher x, AsyncCallback.ChildrenCallback cb, Object ctx) { a("getChildren", () -> super.getChildren(p, w(x), cb, ctx)); }
    @Override public void getChildren(String p, boolean x, AsyncCallback.ChildrenCallback cb, Object ctx) { a("getChildren", () -> super.getChildren(p, x, cb, ctx)); }
    @Override public void getChildren(String p, Watcher x, AsyncCallback.Children2Callback cb, Object ctx) { a("getChildren", () -> super.getChildren(p, w(x), cb, ctx)); }
    @Override public void getChildren(String p, boolean x, AsyncCallback.Children2Callback cb, Object ctx) { a("getChildren", () -> super.getChildren(p, x, cb, ctx)); }
    // removeWatches: the watcher wrapped as when it was set, or ZooKeeper would not find it
    @Override public void removeWatches(String p, Watcher x, Watcher.WatcherType t, boolean local) throws InterruptedException, KeeperException { c("removeWatches", () -> { super.removeWatches(p, w(x), t, local); return null; }); }
    @Override public void removeWatches(String p, Watcher x, Watcher.WatcherType t, boolean local, AsyncCallback.VoidCallback cb, Object ctx) { a("removeWatches", () -> super.removeWatches(p, w(x), t, local, cb, ctx)); }
    @Override public void removeAllWatches(String p, Watcher.WatcherType t, boolean local) throws InterruptedException, KeeperException { c("removeWatches", () -> { super.removeAllWatches(p, t, local); return null; }); }
    @Override public void removeAllWatches(String p, Watcher.WatcherType t, boolean local, AsyncCallback.VoidCallback cb, Object ctx) { a("removeWatches", () -> super.removeAllWatches(p, t, local, cb, ctx)); }
}
