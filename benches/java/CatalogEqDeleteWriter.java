// Commits one equality-delete file to an unpartitioned Iceberg table of any catalog, the way
// Flink's upsert writer does (GenericFileWriterFactory.newEqualityDeleteWriter + newRowDelta), as
// tests/java/EqDeleteWriter.java does for a HadoopCatalog on local disk. Benchmark helper for
// tables on an object store (benches/s3_bench.py: a JdbcCatalog with S3FileIO).
//
// args: <catalog name (a JdbcCatalog's tables are keyed by it)>
//       <catalog properties file (java.util.Properties: catalog-impl or type, uri, io-impl, ...)>
//       <table ident> <key column (long)> <keys file: one key per line>
import java.io.BufferedReader;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.io.OutputFile;

public class CatalogEqDeleteWriter {
  public static void main(String[] a) throws Exception {
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(Paths.get(a[1]))) {
      p.load(r);
    }
    Map<String, String> props = new HashMap<>();
    for (String k : p.stringPropertyNames()) {
      props.put(k, p.getProperty(k));
    }
    Catalog cat = CatalogUtil.buildIcebergCatalog(a[0], props, new Configuration());
    Table t = cat.loadTable(TableIdentifier.parse(a[2]));
    Schema schema = t.schema();
    Schema del = schema.select(a[3]);
    int[] ids = {schema.findField(a[3]).fieldId()};
    // Iceberg 1.12's writer factory (GenericAppenderFactory is gone), as in EqDeleteWriter.
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(t)
            .dataSchema(schema)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(ids)
            .equalityDeleteRowSchema(del)
            .build();
    String name = "eq-" + UUID.randomUUID() + ".parquet";
    OutputFile out = t.io().newOutputFile(t.locationProvider().newDataLocation(name));
    EqualityDeleteWriter<Record> w =
        factory.newEqualityDeleteWriter(EncryptedFiles.plainAsEncryptedOutput(out), t.spec(), null);
    GenericRecord template = GenericRecord.create(del);
    try (BufferedReader in = Files.newBufferedReader(Paths.get(a[4]))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (!line.isEmpty()) {
          GenericRecord r = template.copy();
          r.setField(a[3], Long.valueOf(line.trim()));
          w.write(r);
        }
      }
    }
    w.close();
    t.newRowDelta().addDeletes(w.toDeleteFile()).commit();
    if (cat instanceof AutoCloseable) {
      ((AutoCloseable) cat).close();
    }
  }
}
