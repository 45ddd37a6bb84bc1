import java.io.File;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.zookeeper.server.DataNode;
import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.NodeHashMap;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

/**
 * Test tool: sets the child counter (`cversion`) of one znode in the data dir of a STOPPED
 * standalone ZooKeeper 3.8 server, so that tests can reach the sequence-number limit
 * (2^31 - 1) without two billion creates.
 *
 * Usage: java -cp <zookeeper class path> SetChildCounter.java <dataDir> <path> <cversion>
 * where <dataDir> is the server's `dataDir` (the one holding `version-2/`).
 *
 * How: restore the database the way the server does (latest valid snapshot plus every
 * transaction-log entry after it), change the znode's stat, and save a new snapshot named
 * after the highest zxid restored. On start the server loads the newest snapshot and replays
 * only log entries with a higher zxid: there are none, so nothing undoes the change. The tool
 * checks that by restoring the data dir once more, the server's way, before it reports.
 *
 * Prints one line: `ok path=<path> before=<old> cversion=<new> zxid=0x<hex> snapshot=<file>`.
 */
public class SetChildCounter {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: SetChildCounter <dataDir> <znode path> <cversion>");
            System.exit(2);
        }
        File dataDir = new File(args[0]);
        String path = args[1];
        int cversion = Integer.parseInt(args[2]);
        if (!new File(dataDir, "version-2").isDirectory()) {
            throw new IllegalArgumentException(dataDir + " holds no version-2 directory: not a ZooKeeper dataDir");
        }

        FileTxnSnapLog snapLog = new FileTxnSnapLog(dataDir, dataDir);
        DataTree tree = new DataTree();
        ConcurrentHashMap<Long, Integer> sessions = new ConcurrentHashMap<>();
        long restored = snapLog.restore(tree, sessions, (header, txn, digest) -> { });
        long lastLogged = snapLog.getLastLoggedZxid();
        if (restored != tree.lastProcessedZxid || (lastLogged != -1 && lastLogged > restored)) {
            throw new IllegalStateException("restore stopped at 0x" + Long.toHexString(restored)
                + " but the log goes on to 0x" + Long.toHexString(lastLogged));
        }

        DataNode node = tree.getNode(path);
        if (node == null) throw new IllegalArgumentException("no znode " + path + " in " + dataDir);
        int before;
        synchronized (node) {
            before = node.stat.getCversion();
            // Through the node map's pre/postChange, as DataTree.setCversionPzxid does, so that the
            // tree digest (ZOOKEEPER-3114, on by default in 3.8) stays that of the new content.
            // setCversionPzxid itself only ever raises the counter; this may lower it too.
            NodeHashMap nodes = nodeMap(tree);
            nodes.preChange(path, node);
            node.stat.setCversion(cversion);
            nodes.postChange(path, node);
        }
        // The snapshot also records the tree digest at its zxid, and the server compares it with
        // the tree it loads ("Digests are not matching" otherwise): record the new one.
        recordDigest(tree);

        // The snapshot is named after tree.lastProcessedZxid (= the last zxid in the logs).
        snapLog.save(tree, sessions, true);
        File snapshot = snapLog.findMostRecentSnapshot();
        snapLog.close();

        // What the server will do on start: newest snapshot, then the log entries after it.
        FileTxnSnapLog check = new FileTxnSnapLog(dataDir, dataDir);
        DataTree reloaded = new DataTree();
        long reloadedZxid = check.restore(reloaded, new ConcurrentHashMap<>(), (header, txn, digest) -> {
            throw new IllegalStateException("a log entry after the new snapshot was replayed: zxid 0x"
                + Long.toHexString(header.getZxid()));
        });
        check.close();
        int after = reloaded.getNode(path).stat.getCversion();
        if (after != cversion || reloadedZxid != restored) {
            throw new IllegalStateException("reloaded cversion " + after + " at zxid 0x" + Long.toHexString(reloadedZxid)
                + ", expected " + cversion + " at 0x" + Long.toHexString(restored));
        }
        System.out.println("ok path=" + path + " before=" + before + " cversion=" + after
            + " zxid=0x" + Long.toHexString(restored) + " snapshot=" + snapshot);
    }

    private static void recordDigest(DataTree tree) throws ReflectiveOperationException {
        Method log = DataTree.class.getDeclaredMethod("logZxidDigest", long.class, long.class);
        log.setAccessible(true);
        log.invoke(tree, tree.lastProcessedZxid, tree.getTreeDigest());
    }

    private static NodeHashMap nodeMap(DataTree tree) throws ReflectiveOperationException {
        Field field = DataTree.class.getDeclaredField("nodes");
        field.setAccessible(true);
        return (NodeHashMap) field.get(tree);
    }
}
