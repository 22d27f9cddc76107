// Planning benchmark helper (Iceberg Java, the anchor).
// build <table dir> <files> <files per commit>: a day(ts)-partitioned v2 table of metadata-only
//   data files with full metrics, appended with newFastAppend (one manifest per commit).
// time <table dir> <runs>: best-of-<runs> planFiles() time (warm JVM, fully iterated in Java)
//   for three cases: no filter, id = <one value>, one-day ts range. Prints "case ms files".
import java.nio.ByteBuffer;
import java.time.LocalDate;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.AppendFiles;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Metrics;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.Table;
import org.apache.iceberg.expressions.Expression;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;

public class PlanningBench {
  static final long DAY0 = 19000; // 2022-01-08
  static final long MICROS_PER_DAY = 86_400_000_000L;

  static ByteBuffer b(Type t, Object v) {
    return Conversions.toByteBuffer(t, v);
  }

  public static void main(String[] a) throws Exception {
    HadoopTables tables = new HadoopTables(new Configuration());
    String loc = a[1];
    if (a[0].equals("build")) {
      int files = Integer.parseInt(a[2]);
      int perCommit = Integer.parseInt(a[3]);
      Schema schema = new Schema(
          Types.NestedField.required(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "ts", Types.TimestampType.withoutZone()),
          Types.NestedField.optional(3, "name", Types.StringType.get()),
          Types.NestedField.optional(4, "amount", Types.DoubleType.get()));
      PartitionSpec spec = PartitionSpec.builderFor(schema).day("ts").build();
      Map<String, String> props = new HashMap<>();
      props.put("format-version", "2");
      Table t = tables.create(schema, spec, props, loc);
      int n = 0;
      for (int c = 0; c < files / perCommit; c++) {
        AppendFiles app = t.newFastAppend();
        for (int k = 0; k < perCommit; k++, n++) {
          long day = DAY0 + (long) n * 365 / files; // days grow with n: a manifest spans ~4 days
          long tsLo = day * MICROS_PER_DAY + (n % 1000) * 1000L;
          long tsHi = tsLo + 3_600_000_000L;
          long idLo = (long) n * 1000;
          Map<Integer, Long> sizes = new HashMap<>(), values = new HashMap<>(), nulls = new HashMap<>(), nans = new HashMap<>();
          Map<Integer, ByteBuffer> lo = new HashMap<>(), hi = new HashMap<>();
          for (int f = 1; f <= 4; f++) {
            sizes.put(f, 250_000L);
            values.put(f, 1000L);
            nulls.put(f, 0L);
          }
          nans.put(4, 0L);
          lo.put(1, b(Types.LongType.get(), idLo));
          hi.put(1, b(Types.LongType.get(), idLo + 999));
          lo.put(2, b(Types.TimestampType.withoutZone(), tsLo));
          hi.put(2, b(Types.TimestampType.withoutZone(), tsHi));
          lo.put(3, b(Types.StringType.get(), String.format("name_%07d", n)));
          hi.put(3, b(Types.StringType.get(), String.format("name_%07dz", n)));
          lo.put(4, b(Types.DoubleType.get(), -1.0 * n));
          hi.put(4, b(Types.DoubleType.get(), 1.0 * n + 1));
          Metrics m = new Metrics(1000L, sizes, values, nulls, nans, lo, hi);
          String part = "ts_day=" + LocalDate.ofEpochDay(day);
          app.appendFile(DataFiles.builder(spec)
              .withPath(loc + "/data/" + part + "/f-" + n + ".parquet")
              .withFormat(FileFormat.PARQUET)
              .withFileSizeInBytes(1_000_000L)
              .withRecordCount(1000L)
              .withMetrics(m)
              .withPartitionPath(part)
              .build());
        }
        app.commit();
      }
      System.out.println("built " + n + " files");
      return;
    }
    int runs = Integer.parseInt(a[2]);
    Table t = tables.load(loc);
    long files = Long.parseLong(t.currentSnapshot().summary().get("total-data-files"));
    String[] names = {"no filter", "id = one value", "one-day ts range"};
    long oneDay = DAY0 + 100;
    Expression[] exprs = {
      Expressions.alwaysTrue(),
      Expressions.equal("id", (files / 2) * 1000 + 7),
      Expressions.and(
          Expressions.greaterThanOrEqual("ts", LocalDate.ofEpochDay(oneDay) + "T00:00:00"),
          Expressions.lessThan("ts", LocalDate.ofEpochDay(oneDay + 1) + "T00:00:00"))
    };
    for (int c = 0; c < exprs.length; c++) {
      double best = Double.MAX_VALUE;
      long count = 0;
      for (int r = 0; r < runs + 1; r++) { // first run warms the JVM
        long t0 = System.nanoTime();
        count = 0;
        try (CloseableIterable<FileScanTask> tasks = t.newScan().filter(exprs[c]).planFiles()) {
          for (FileScanTask task : tasks) {
            count++;
          }
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        if (r > 0) best = Math.min(best, ms);
      }
      System.out.println(names[c] + "\t" + best + "\t" + count);
    }
  }
}
