// Appends existing Parquet data files to a table of a REST catalog, one commit each, as a
// second kind of writer racing icefloe's (Iceberg Java's RESTCatalog + S3FileIO; the
// fast-append retries on conflicts per the table's commit.retry.* properties). Test helper.
//
// args: <catalog properties file (key=value lines)> <table ident> <ready file> <go file>
//       <data files file: "path<TAB>size<TAB>records" lines, one commit each>
// Once the table is loaded it writes the ready file (atomically), then waits for the go file
// (the protocol of tests/support/start_gate.py).
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;

public class RestAppender {
  public static void main(String[] a) throws Exception {
    Map<String, String> props = new HashMap<>();
    for (String line : Files.readAllLines(Paths.get(a[0]))) {
      int eq = line.indexOf('=');
      if (eq > 0) {
        props.put(line.substring(0, eq), line.substring(eq + 1));
      }
    }
    RESTCatalog catalog = new RESTCatalog();
    catalog.initialize("java", props);
    Table table = catalog.loadTable(TableIdentifier.parse(a[1]));
    List<String> files = Files.readAllLines(Paths.get(a[4]));
    Path ready = Paths.get(a[2]);
    Path tmp = Paths.get(a[2] + "." + ProcessHandle.current().pid() + ".tmp");
    Files.writeString(tmp, Long.toString(ProcessHandle.current().pid()));
    Files.move(tmp, ready, StandardCopyOption.ATOMIC_MOVE);
    while (!Files.exists(Paths.get(a[3]))) {
      Thread.sleep(2);
    }
    for (String line : files) {
      String[] f = line.split("\t");
      DataFile df =
          DataFiles.builder(table.spec())
              .withPath(f[0])
              .withFileSizeInBytes(Long.parseLong(f[1]))
              .withRecordCount(Long.parseLong(f[2]))
              .withFormat(FileFormat.PARQUET)
              .build();
      table.newFastAppend().appendFile(df).commit();
      table.refresh();
    }
    catalog.close();
    System.out.println("ok " + files.size());
  }
}
