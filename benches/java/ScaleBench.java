// Scale benchmark helper (Iceberg Java's core API, the anchor; Spark only for orphan removal).
// Every mode but `snapshots` runs once in a fresh JVM and prints one line,
// "<ms>\t<count>\t<peak RSS kB>", the time covering the table's load and the operation,
// the peak RSS read from /proc/self/status (VmHWM) at the end.
//
// snapshots <table dir> <n>: a v2 table of n snapshots, each an overwrite replacing the
//   table's one data file (a one-byte stand-in on disk: nothing opens it), built in one
//   transaction (one metadata file) so that building stays linear.
// plan <table dir>: planFiles() collected into a list, as Spark's scan holds its tasks.
// files <table dir>: every row of the `files` metadata table.
// expire <table dir> <retain last>: expireSnapshots() of every snapshot but the last ones,
//   deleting the files only they reached; count = snapshots removed.
// orphans <table dir>: Iceberg's Spark action (deleteOrphanFiles, as CALL remove_orphan_files
//   runs it: Java has no orphan removal without Spark) on a local[2] session started first
//   (not timed: a Spark job has one); files older than a day; count = orphans deleted.
// append <table dir> <commits>: that many appends (newAppend, as table.append) of one metadata-only data file each;
//   ms = the median commit, count = commits; every commit's ms on a second line.
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.DataFile;
import org.apache.iceberg.DataFiles;
import org.apache.iceberg.FileFormat;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.MetadataTableType;
import org.apache.iceberg.MetadataTableUtils;
import org.apache.iceberg.PartitionSpec;
import org.apache.iceberg.Schema;
import org.apache.iceberg.StructLike;
import org.apache.iceberg.Table;
import org.apache.iceberg.Transaction;
import org.apache.iceberg.actions.DeleteOrphanFiles;
import org.apache.iceberg.hadoop.HadoopTables;
import org.apache.iceberg.io.CloseableIterable;
import org.apache.iceberg.spark.actions.SparkActions;
import org.apache.iceberg.types.Types;
import org.apache.spark.sql.SparkSession;

public class ScaleBench {
  static long peakRssKb() throws IOException {
    for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IOException("no VmHWM in /proc/self/status");
  }

  static DataFile standIn(PartitionSpec spec, String path) {
    return DataFiles.builder(spec)
        .withPath(path)
        .withFormat(FileFormat.PARQUET)
        .withFileSizeInBytes(1L)
        .withRecordCount(1L)
        .build();
  }

  static void report(long t0, long count) throws IOException {
    double ms = (System.nanoTime() - t0) / 1e6;
    System.out.println(ms + "\t" + count + "\t" + peakRssKb());
  }

  public static void main(String[] a) throws Exception {
    HadoopTables tables = new HadoopTables(new Configuration());
    String mode = a[0];
    String loc = a[1];
    if (mode.equals("snapshots")) {
      int n = Integer.parseInt(a[2]);
      Schema schema = new Schema(
          Types.NestedField.optional(1, "id", Types.LongType.get()),
          Types.NestedField.optional(2, "v", Types.StringType.get()));
      Map<String, String> props = new HashMap<>();
      props.put("format-version", "2");
      Table t = tables.create(schema, PartitionSpec.unpartitioned(), props, loc);
      Path data = Paths.get(loc, "data");
      Files.createDirectories(data);
      Transaction tx = t.newTransaction();
      DataFile previous = null;
      for (int i = 0; i < n; i++) {
        Path file = data.resolve(String.format("s-%06d.parquet", i));
        Files.write(file, new byte[] {0});
        DataFile next = standIn(t.spec(), file.toString());
        if (previous == null) {
          tx.newAppend().appendFile(next).commit();
        } else {
          tx.newOverwrite().deleteFile(previous).addFile(next).commit();
        }
        previous = next;
      }
      tx.commitTransaction();
      System.out.println("built " + n + " snapshots");
      return;
    }
    if (mode.equals("orphans")) {
      SparkSession spark = SparkSession.builder()
          .master("local[2]")
          .config("spark.ui.enabled", "false")
          .config("spark.sql.shuffle.partitions", "2")
          .getOrCreate();
      long t0 = System.nanoTime();
      Table t = tables.load(loc);
      DeleteOrphanFiles.Result r = SparkActions.get(spark)
          .deleteOrphanFiles(t)
          .olderThan(System.currentTimeMillis() - 86_400_000L)
          .execute();
      long n = 0;
      for (String f : r.orphanFileLocations()) {
        n++;
      }
      report(t0, n);
      spark.stop();
      return;
    }
    long t0 = System.nanoTime();
    Table t = tables.load(loc);
    switch (mode) {
      case "plan": {
        List<FileScanTask> tasks = new ArrayList<>();
        try (CloseableIterable<FileScanTask> it = t.newScan().planFiles()) {
          for (FileScanTask task : it) {
            tasks.add(task);
          }
        }
        report(t0, tasks.size());
        return;
      }
      case "files": {
        Table files = MetadataTableUtils.createMetadataTableInstance(t, MetadataTableType.FILES);
        long rows = 0;
        try (CloseableIterable<FileScanTask> it = files.newScan().planFiles()) {
          for (FileScanTask task : it) {
            try (CloseableIterable<StructLike> r = task.asDataTask().rows()) {
              for (StructLike row : r) {
                rows++;
              }
            }
          }
        }
        report(t0, rows);
        return;
      }
      case "expire": {
        int before = 0;
        for (Object s : t.snapshots()) {
          before++;
        }
        t.expireSnapshots()
            .expireOlderThan(System.currentTimeMillis() + 1)
            .retainLast(Integer.parseInt(a[2]))
            .commit();
        t.refresh();
        int after = 0;
        for (Object s : t.snapshots()) {
          after++;
        }
        report(t0, before - after);
        return;
      }
      case "append": {
        int commits = Integer.parseInt(a[2]);
        List<Double> times = new ArrayList<>();
        for (int i = 0; i < commits; i++) {
          long c0 = System.nanoTime();
          t.newAppend().appendFile(standIn(t.spec(), loc + "/data/java-append-" + i + ".parquet")).commit();
          times.add((System.nanoTime() - c0) / 1e6);
        }
        List<Double> sorted = new ArrayList<>(times);
        Collections.sort(sorted);
        System.out.println(sorted.get(commits / 2) + "\t" + commits + "\t" + peakRssKb());
        System.out.println(times);
        return;
      }
      default:
        throw new IllegalArgumentException("unknown mode " + mode);
    }
  }
}
