// Format v3 `geometry` and `geography` through Iceberg Java's core API (Spark 3.5 cannot show
// them): creates, appends to and reads a table of WKB columns. Test helper for
// tests/table/test_geospatial.py.
//
// args: create <warehouse uri> <table ident> [<format version>, default 3]
//       append <warehouse uri> <table ident> <rows file: "id\tg\tg3857\tgeog\ts.pt", WKB as hex,
//              \N = null>
//       read   <warehouse uri> <table ident>   (prints the rows in the same form)
//       types  <warehouse uri> <table ident>   (prints "<field id>\t<Java's type string>" per
//              field, nested ones included)
//       bounds <warehouse uri> <table ident>   (prints "<field id>\t<lower hex>\t<upper hex>" per
//              bound of the current snapshot's data files, as Java reads them)
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.data.GenericFileWriterFactory;
import org.apache.iceberg.data.GenericRecord;
import org.apache.iceberg.data.IcebergGenerics;
import org.apache.iceberg.data.Record;
import org.apache.iceberg.encryption.EncryptedFiles;
import org.apache.iceberg.hadoop.HadoopCatalog;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.io.DataWriter;
import org.apache.iceberg.io.OutputFile;
import org.apache.iceberg.types.EdgeAlgorithm;
import org.apache.iceberg.types.Types;

public class GeoTable {
  public static void main(String[] a) throws Exception {
    HadoopCatalog cat = new HadoopCatalog(new Configuration(), a[1]);
    TableIdentifier ident = TableIdentifier.parse(a[2]);
    switch (a[0]) {
      case "create":
        create(cat, ident, a.length > 3 ? a[3] : "3");
        break;
      case "append":
        append(cat.loadTable(ident), a[3]);
        break;
      case "read":
        read(cat.loadTable(ident));
        break;
      case "types":
        types(cat.loadTable(ident));
        break;
      case "bounds":
        bounds(cat.loadTable(ident));
        break;
      default:
        throw new IllegalArgumentException("unknown mode " + a[0]);
    }
  }

  static void create(HadoopCatalog cat, TableIdentifier ident, String formatVersion) {
    Schema schema =
        new Schema(
            Types.NestedField.required(1, "id", Types.LongType.get()),
            Types.NestedField.optional(2, "g", Types.GeometryType.crs84()),
            Types.NestedField.optional(3, "g3857", Types.GeometryType.of("srid:3857")),
            Types.NestedField.optional(4, "geog", Types.GeographyType.of("EPSG:4326", EdgeAlgorithm.KARNEY)),
            Types.NestedField.optional(
                5, "s", Types.StructType.of(Types.NestedField.optional(6, "pt", Types.GeometryType.crs84()))));
    Map<String, String> props = new HashMap<>();
    props.put("format-version", formatVersion);
    cat.createTable(ident, schema, PartitionSpec.unpartitioned(), props);
  }

  static ByteBuffer unhex(String s) {
    if (s.equals("\\N")) {
      return null;
    }
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return ByteBuffer.wrap(b);
  }

  static String hex(Object o) {
    if (o == null) {
      return "\\N";
    }
    ByteBuffer b = (ByteBuffer) o;
    StringBuilder s = new StringBuilder();
    for (int i = b.position(); i < b.limit(); i++) {
      s.append(String.format("%02x", b.get(i)));
    }
    return s.toString();
  }

  static void append(Table t, String rowsFile) throws Exception {
    Schema schema = t.schema();
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(t).dataSchema(schema).dataFileFormat(FileFormat.PARQUET).build();
    String name = "java-" + UUID.randomUUID() + ".parquet";
    OutputFile out = t.io().newOutputFile(t.locationProvider().newDataLocation(name));
    DataWriter<Record> w = factory.newDataWriter(EncryptedFiles.plainAsEncryptedOutput(out), t.spec(), null);
    for (String line : Files.readAllLines(Paths.get(rowsFile))) {
      if (line.isEmpty()) {
        continue;
      }
      String[] v = line.split("\t", -1);
      GenericRecord r = GenericRecord.create(schema);
      r.setField("id", Long.parseLong(v[0]));
      r.setField("g", unhex(v[1]));
      r.setField("g3857", unhex(v[2]));
      r.setField("geog", unhex(v[3]));
      GenericRecord s = GenericRecord.create(schema.findField("s").type().asStructType());
      s.setField("pt", unhex(v[4]));
      r.setField("s", s);
      w.write(r);
    }
    w.close();
    DataFile f = w.toDataFile();
    t.newAppend().appendFile(f).commit();
  }

  static void read(Table t) throws Exception {
    StringBuilder out = new StringBuilder();
    try (CloseableIterable<Record> rows = IcebergGenerics.read(t).build()) {
      for (Record r : rows) {
        Record s = (Record) r.getField("s");
        out.append(r.getField("id")).append('\t');
        out.append(hex(r.getField("g"))).append('\t');
        out.append(hex(r.getField("g3857"))).append('\t');
        out.append(hex(r.getField("geog"))).append('\t');
        out.append(s == null ? "\\N" : hex(s.getField("pt"))).append('\n');
      }
    }
    System.out.print(out);
  }

  static void types(Table t) {
    StringBuilder out = new StringBuilder();
    List<Types.NestedField> fields = org.apache.iceberg.types.TypeUtil.indexById(t.schema().asStruct())
        .values().stream().sorted((x, y) -> Integer.compare(x.fieldId(), y.fieldId())).toList();
    for (Types.NestedField f : fields) {
      out.append(f.fieldId()).append('\t').append(f.type()).append('\n');
    }
    System.out.print(out);
  }

  static void bounds(Table t) throws Exception {
    StringBuilder out = new StringBuilder();
    try (CloseableIterable<org.apache.iceberg.FileScanTask> tasks = t.newScan().includeColumnStats().planFiles()) {
      for (org.apache.iceberg.FileScanTask task : tasks) {
        DataFile f = task.file();
        for (Map.Entry<Integer, ByteBuffer> e : new java.util.TreeMap<>(f.lowerBounds()).entrySet()) {
          out.append(e.getKey()).append('\t').append(hex(e.getValue())).append('\t');
          out.append(hex(f.upperBounds().get(e.getKey()))).append('\n');
        }
      }
    }
    System.out.print(out);
  }
}
