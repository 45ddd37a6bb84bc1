import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.Revoker;
import org.apache.curator.retry.RetryOneTime;

/**
 * An Apache Curator 5 client driven line by line over stdin/stdout, for the interoperability
 * tests (Java 17 runs this single file; test/interop/curator-client.ts sets the classpath).
 *
 * Each command is one line of tab-separated fields, the first a request id the answer
 * carries back: `id op args...`. Curator's locks belong to the thread that took them, so
 * every lock lives in a "slot" with a thread of its own; a blocking acquire in one slot
 * leaves the others free to answer.
 *
 *   id mutex SLOT PATH          an InterProcessMutex on PATH, in SLOT
 *   id rw SLOT PATH             an InterProcessReadWriteLock on PATH, in SLOT
 *   id revocable SLOT WHICH     makeRevocable on it (WHICH: mutex, read, write); counts requests
 *   id acquire SLOT WHICH MS    acquire (MS < 0: wait forever); answers acquired
 *   id release SLOT WHICH       release (once per acquire: Curator's locks are reentrant)
 *   id revocations SLOT         how many revocation requests SLOT's listener saw
 *   id participants SLOT WHICH  getParticipantNodes
 *   id revoke NODEPATH          Revoker.attemptRevoke
 *   id quit
 */
public class CuratorWorker {
    private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    private static CuratorFramework client;
    private static final Map<String, Slot> slots = new HashMap<>();

    static final class Slot {
        final ExecutorService thread = Executors.newSingleThreadExecutor();
        InterProcessMutex mutex;
        InterProcessReadWriteLock rw;
        final AtomicInteger revocations = new AtomicInteger();

        InterProcessMutex lock(String which) {
            switch (which) {
                case "mutex": return mutex;
                case "read": return rw.readLock();
                case "write": return rw.writeLock();
                default: throw new IllegalArgumentException("unknown lock kind " + which);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        client = CuratorFrameworkFactory.newClient(args[0], 10_000, 5_000, new RetryOneTime(200));
        client.start();
        if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) throw new IllegalStateException("Curator could not connect to " + args[0]);
        answer("0", "\"ready\":true");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split("\t");
            if (f[1].equals("quit")) break;
            handle(f);
        }
        for (Slot slot : slots.values()) slot.thread.shutdownNow();
        client.close();
    }

    private static void handle(String[] f) {
        String id = f[0];
        try {
            switch (f[1]) {
                case "mutex": slot(f[2]).mutex = new InterProcessMutex(client, f[3]); answer(id, "\"ok\":true"); break;
                case "rw": slot(f[2]).rw = new InterProcessReadWriteLock(client, f[3]); answer(id, "\"ok\":true"); break;
                case "revocable": {
                    Slot slot = slot(f[2]);
                    slot.lock(f[3]).makeRevocable(lock -> slot.revocations.incrementAndGet());
                    answer(id, "\"ok\":true");
                    break;
                }
                case "acquire": {
                    Slot slot = slot(f[2]);
                    long ms = Long.parseLong(f[4]);
                    slot.thread.submit(() -> run(id, () -> {
                        InterProcessMutex lock = slot.lock(f[3]);
                        boolean got = ms < 0 ? acquireForever(lock) : lock.acquire(ms, TimeUnit.MILLISECONDS);
                        return "\"acquired\":" + got;
                    }));
                    break;
                }
                case "release": {
                    Slot slot = slot(f[2]);
                    slot.thread.submit(() -> run(id, () -> {
                        slot.lock(f[3]).release();
                        return "\"released\":true";
                    }));
                    break;
                }
                case "revocations": answer(id, "\"count\":" + slot(f[2]).revocations.get()); break;
                case "participants": answer(id, "\"nodes\":" + json(slot(f[2]).lock(f[3]).getParticipantNodes())); break;
                case "revoke": Revoker.attemptRevoke(client, f[2]); answer(id, "\"ok\":true"); break;
                default: throw new IllegalArgumentException("unknown op " + f[1]);
            }
        } catch (Exception e) {
            answer(id, "\"error\":" + quote(e.toString()));
        }
    }

    interface Work { String call() throws Exception; }

    private static void run(String id, Work work) {
        try {
            answer(id, work.call());
        } catch (Exception e) {
            answer(id, "\"error\":" + quote(e.toString()));
        }
    }

    private static boolean acquireForever(InterProcessMutex lock) throws Exception {
        lock.acquire();
        return true;
    }

    private static Slot slot(String name) {
        return slots.computeIfAbsent(name, k -> new Slot());
    }

    private static synchronized void answer(String id, String fields) {
        OUT.println("{\"id\":" + id + "," + fields + "}");
    }

    private static String json(Collection<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String item : items) quoted.add(quote(item));
        return "[" + String.join(",", quoted) + "]";
    }

    private static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }
}
