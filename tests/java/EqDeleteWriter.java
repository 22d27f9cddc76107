// Commits one equality-delete file to an Iceberg table the way Flink's upsert writer does:
// GenericAppenderFactory.newEqDeleteWriter + newRowDelta().addDeletes. Test/benchmark helper.
//
// args: <warehouse uri> <table ident> <spec id, -1 = current> <partition "col=val,..." or "">
//       <key columns "a,b"> <keys file: one row per line, values tab-separated, \N = null>
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.deletes.EqualityDeleteWriter;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.Type;

public class EqDeleteWriter {
  public static void main(String[] a) throws Exception {
    HadoopCatalog cat = new HadoopCatalog(new Configuration(), a[0]);
    Table t = cat.loadTable(TableIdentifier.parse(a[1]));
    Schema schema = t.schema();
    int specId = Integer.parseInt(a[2]);
    PartitionSpec spec = specId < 0 ? t.spec() : t.specs().get(specId);
    String[] cols = a[4].split(",");
    Schema del = schema.select(cols);
    int[] ids = new int[cols.length];
    for (int i = 0; i < cols.length; i++) {
      ids[i] = schema.findField(cols[i]).fieldId();
    }
    // Iceberg 1.12's writer factory (GenericAppenderFactory is gone), as Flink's upsert
    // writer builds its equality delete writers.
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(t)
            .dataSchema(schema)
            .deleteFileFormat(FileFormat.PARQUET)
            .equalityFieldIds(ids)
            .equalityDeleteRowSchema(del)
            .build();
    PartitionKey pk = null;
    if (!a[3].isEmpty()) {
      pk = new PartitionKey(spec, schema);
      GenericRecord r = GenericRecord.create(schema);
      for (String kv : a[3].split(",")) {
        String[] p = kv.split("=", 2);
        r.setField(p[0], parse(schema.findType(p[0]), p[1]));
      }
      pk.partition(r);
    }
    String name = "eq-" + UUID.randomUUID() + ".parquet";
    OutputFile out = t.io().newOutputFile(t.locationProvider().newDataLocation(name));
    EqualityDeleteWriter<Record> w =
        factory.newEqualityDeleteWriter(EncryptedFiles.plainAsEncryptedOutput(out), spec, pk);
    GenericRecord template = GenericRecord.create(del);
    try (java.io.BufferedReader in = Files.newBufferedReader(Paths.get(a[5]))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isEmpty()) {
          continue;
        }
        String[] vs = line.split("\t", -1);
        GenericRecord r = template.copy();
        for (int i = 0; i < cols.length; i++) {
          r.setField(cols[i], vs[i].equals("\\N") ? null : parse(del.findType(cols[i]), vs[i]));
        }
        w.write(r);
      }
    }
    w.close();
    t.newRowDelta().addDeletes(w.toDeleteFile()).commit();
  }

  static Object parse(Type t, String s) {
    switch (t.typeId()) {
      case INTEGER:
        return Integer.valueOf(s);
      case LONG:
        return Long.valueOf(s);
      case FLOAT:
        return Float.valueOf(s);
      case DOUBLE:
        return Double.valueOf(s);
      case STRING:
        return s;
      case BOOLEAN:
        return Boolean.valueOf(s);
      default:
        throw new IllegalArgumentException("unsupported key type " + t);
    }
  }
}
