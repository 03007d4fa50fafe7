// Runs Neo4j Community embedded with Bolt on a loopback address.
// Started by service/neo4j_local/process.py as a single-file source program:
//   java <jvm flags> -cp 'lib/*' Launcher.java <home> <port> <pagecacheMiB> [--exit-on-stdin-eof]
// Prints one readiness line once Bolt accepts connections; a SIGTERM runs the
// shutdown hook, which stops the database cleanly.
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.BoltConnectorInternalSettings;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.api.impl.index.LuceneSettings;

public class Launcher {
    public static final String READY = "CTXDAG_NEO4J_READY";

    public static void main(String[] args) throws Exception {
        Path home = Path.of(args[0]);
        int port = Integer.parseInt(args[1]);
        long pagecacheMiB = Long.parseLong(args[2]);
        boolean exitOnStdinEof = args.length > 3 && args[3].equals("--exit-on-stdin-eof");

        DatabaseManagementService dbms = new DatabaseManagementServiceBuilder(home)
            .setConfig(BoltConnector.enabled, true)
            .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
            .setConfig(BoltConnector.encryption_level, BoltConnector.EncryptionLevel.DISABLED)
            // Bolt's thread pools are torn down after the databases have stopped and
            // checkpointed; the default 5 s waits (twice) only make every stop ~10 s slower.
            .setConfig(BoltConnectorInternalSettings.thread_pool_shutdown_wait_time, Duration.ofMillis(500))
            .setConfig(BoltConnectorInternalSettings.connection_shutdown_wait_time, Duration.ofMillis(500))
            .setConfig(HttpConnector.enabled, false)
            .setConfig(HttpsConnector.enabled, false)
            .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.mebiBytes(pagecacheMiB))
            .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ofSeconds(120))
            // Lucene merges a full-text index's segments two at a time by default, so each
            // document is rewritten once per doubling of the index: during a large import its
            // merges took a quarter of Neo4j's CPU; ten at a time, under a tenth, and searches
            // were as fast (docs/benchmarks.md).
            .setConfig(LuceneSettings.lucene_merge_factor, 10)
            .build();
        Runtime.getRuntime().addShutdownHook(new Thread(dbms::shutdown, "ctxdag-neo4j-shutdown"));

        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        System.out.println(READY + " bolt://127.0.0.1:" + port);
        System.out.flush();

        if (exitOnStdinEof) {
            // The parent holds our stdin open; when it dies the pipe closes and we stop too.
            try {
                while (System.in.read() != -1) { }
            } catch (IOException ignored) { }
            System.exit(0);
        }
        Thread.currentThread().join();
    }
}
