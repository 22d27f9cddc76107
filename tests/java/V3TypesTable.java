// Format v3 types through Iceberg Java's core API (Spark 3.5 has no nanosecond timestamps):
// creates, appends to and reads a table with `timestamp_ns`, `timestamptz_ns`, `unknown` and
// (optionally) `variant` columns. Test helper for tests/table/test_v3_types.py.
//
// args: create <warehouse uri> <table ident> <with variant: 0|1>
//       append <warehouse uri> <table ident> <rows file: "id\tts_nanos\ttstz_nanos", \N = null>
//       read   <warehouse uri> <table ident>   (prints the rows in the same form, plus "\tu",
//              plus "\t<metadata hex>:<value hex>" of `v` when the table has it)
// With a `variant` column, append gives row `id` a value by id % 4: null, an object
// {"id": id, "tag": "r<id>"}, a string "s<id>", or a long.
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.PartitionKey;
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
import org.apache.iceberg.types.Types;
import org.apache.iceberg.variants.ShreddedObject;
import org.apache.iceberg.variants.Variant;
import org.apache.iceberg.variants.VariantMetadata;
import org.apache.iceberg.variants.Variants;

public class V3TypesTable {
  public static void main(String[] a) throws Exception {
    HadoopCatalog cat = new HadoopCatalog(new Configuration(), a[1]);
    TableIdentifier ident = TableIdentifier.parse(a[2]);
    switch (a[0]) {
      case "create":
        create(cat, ident, a[3].equals("1"));
        break;
      case "append":
        append(cat.loadTable(ident), a[3]);
        break;
      case "read":
        read(cat.loadTable(ident));
        break;
      default:
        throw new IllegalArgumentException("unknown mode " + a[0]);
    }
  }

  static void create(HadoopCatalog cat, TableIdentifier ident, boolean withVariant) {
    List<Types.NestedField> fields = new ArrayList<>();
    fields.add(Types.NestedField.required(1, "id", Types.LongType.get()));
    fields.add(Types.NestedField.optional(2, "ts", Types.TimestampNanoType.withoutZone()));
    fields.add(Types.NestedField.optional(3, "tstz", Types.TimestampNanoType.withZone()));
    fields.add(Types.NestedField.optional(4, "u", Types.UnknownType.get()));
    if (withVariant) {
      fields.add(Types.NestedField.optional(5, "v", Types.VariantType.get()));
    }
    Schema schema = new Schema(fields);
    PartitionSpec spec = PartitionSpec.builderFor(schema).day("ts").bucket("tstz", 3).build();
    Map<String, String> props = new HashMap<>();
    props.put("format-version", "3");
    cat.createTable(ident, schema, spec, props);
  }

  static void append(Table t, String rowsFile) throws Exception {
    Schema schema = t.schema();
    PartitionSpec spec = t.spec();
    GenericFileWriterFactory factory =
        new GenericFileWriterFactory.Builder(t).dataSchema(schema).dataFileFormat(FileFormat.PARQUET).build();
    Map<PartitionKey, DataWriter<Record>> writers = new HashMap<>();

    for (String line : Files.readAllLines(Paths.get(rowsFile))) {
      if (line.isEmpty()) {
        continue;
      }
      String[] v = line.split("\t", -1);
      GenericRecord r = GenericRecord.create(schema);
      r.setField("id", Long.parseLong(v[0]));
      r.setField("ts", v[1].equals("\\N") ? null : LocalDateTime.ofInstant(instant(v[1]), ZoneOffset.UTC));
      r.setField("tstz", v[2].equals("\\N") ? null : OffsetDateTime.ofInstant(instant(v[2]), ZoneOffset.UTC));
      if (schema.findField("v") != null) {
        r.setField("v", variantFor(Long.parseLong(v[0])));
      }
      // Partition keys are computed on Iceberg's internal form (nanoseconds as longs); 1.10's
      // InternalRecordWrapper does not convert the nanosecond types, so set it up by hand.
      GenericRecord internal = GenericRecord.create(schema);
      internal.setField("id", r.getField("id"));
      internal.setField("ts", v[1].equals("\\N") ? null : Long.parseLong(v[1]));
      internal.setField("tstz", v[2].equals("\\N") ? null : Long.parseLong(v[2]));
      PartitionKey pk = new PartitionKey(spec, schema);
      pk.partition(internal);
      DataWriter<Record> w = writers.get(pk);
      if (w == null) {
        String name = "java-" + UUID.randomUUID() + ".parquet";
        OutputFile out = t.io().newOutputFile(t.locationProvider().newDataLocation(spec, pk, name));
        w = factory.newDataWriter(EncryptedFiles.plainAsEncryptedOutput(out), spec, pk.copy());
        writers.put(pk.copy(), w);
      }
      w.write(r);
    }
    AppendFiles append = t.newAppend();
    for (DataWriter<Record> w : writers.values()) {
      w.close();
      DataFile f = w.toDataFile();
      append.appendFile(f);
    }
    append.commit();
  }

  static Variant variantFor(long id) {
    switch ((int) Math.floorMod(id, 4L)) {
      case 0:
        return null;
      case 1: {
        VariantMetadata md = Variants.metadata("id", "tag");
        ShreddedObject o = Variants.object(md);
        o.put("id", Variants.of(id));
        o.put("tag", Variants.of("r" + id));
        return Variant.of(md, o);
      }
      case 2:
        return Variant.of(Variants.emptyMetadata(), Variants.of("s" + id));
      default:
        return Variant.of(Variants.emptyMetadata(), Variants.of(id));
    }
  }

  static String hex(ByteBuffer b) {
    StringBuilder s = new StringBuilder();
    for (int i = b.position(); i < b.limit(); i++) {
      s.append(String.format("%02x", b.get(i)));
    }
    return s.toString();
  }

  static String variantHex(Variant v) {
    ByteBuffer md = ByteBuffer.allocate(v.metadata().sizeInBytes()).order(ByteOrder.LITTLE_ENDIAN);
    v.metadata().writeTo(md, 0);
    ByteBuffer val = ByteBuffer.allocate(v.value().sizeInBytes()).order(ByteOrder.LITTLE_ENDIAN);
    v.value().writeTo(val, 0);
    return hex(md) + ":" + hex(val);
  }

  static Instant instant(String nanos) {
    long n = Long.parseLong(nanos);
    return Instant.ofEpochSecond(Math.floorDiv(n, 1_000_000_000L), Math.floorMod(n, 1_000_000_000L));
  }

  static String nanos(Instant i) {
    return Long.toString(Math.addExact(Math.multiplyExact(i.getEpochSecond(), 1_000_000_000L), i.getNano()));
  }

  static void read(Table t) throws Exception {
    StringBuilder out = new StringBuilder();
    boolean withVariant = t.schema().findField("v") != null;
    List<String> columns = new ArrayList<>(List.of("id", "ts", "tstz", "u"));
    if (withVariant) {
      columns.add("v");
    }
    try (CloseableIterable<Record> rows = IcebergGenerics.read(t).select(columns).build()) {
      for (Record r : rows) {
        Object ts = r.getField("ts");
        Object tstz = r.getField("tstz");
        Object u = r.getField("u");
        out.append(r.getField("id")).append('\t');
        out.append(ts == null ? "\\N" : nanos(((LocalDateTime) ts).toInstant(ZoneOffset.UTC))).append('\t');
        out.append(tstz == null ? "\\N" : nanos(((OffsetDateTime) tstz).toInstant())).append('\t');
        out.append(u == null ? "\\N" : u.toString());
        if (withVariant) {
          Object v = r.getField("v");
          out.append('\t').append(v == null ? "\\N" : variantHex((Variant) v));
        }
        out.append('\n');
      }
    }
    System.out.print(out);
  }
}
