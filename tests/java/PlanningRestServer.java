// Apache Iceberg's REST catalog adapter (RESTCatalogAdapter, 1.11's test fixtures) behind a
// Jetty server, as RESTCatalogServer runs it, with a planning behaviour chosen per table so one
// server answers every server-side scan planning case of the tests. Test helper.
//
// Catalog properties come from CATALOG_* variables as for RESTCatalogServer (`__` is `-`, `_`
// is `.`); `rest.port` is the port. Table properties choose how the server plans its scans:
//   test.plan.async=true            answer `submitted` and plan in the background
//   test.plan.async-delay-ms=N      (async) the planning starts after N ms (the adapter's one
//                                   planning thread is kept busy that long first)
//   test.plan.tasks-per-plan-task=N file scan tasks per plan task (default 100; 0 makes
//                                   planning fail, as Iterables.partition refuses a size of 0)
import java.lang.reflect.Field;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;

import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Scan;
import org.apache.iceberg.TableScan;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.CatalogHandlers;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;

public class PlanningRestServer {
  static Map<String, String> tableProperties(Scan<?, FileScanTask, ?> scan) {
    return scan instanceof TableScan ? ((TableScan) scan).table().properties() : Map.of();
  }

  static class Adapter extends RESTCatalogAdapter {
    Adapter(Catalog catalog) {
      super(catalog);
      setPlanningBehavior(
          new PlanningBehavior() {
            @Override
            public boolean shouldPlanTableScanAsync(Scan<?, FileScanTask, ?> scan) {
              Map<String, String> props = tableProperties(scan);
              boolean async = Boolean.parseBoolean(props.getOrDefault("test.plan.async", "false"));
              long delay = Long.parseLong(props.getOrDefault("test.plan.async-delay-ms", "0"));
              if (async && delay > 0) {
                planningPool().submit(() -> sleep(delay));
              }
              // CatalogHandlers.planTableScan asks this first, then (same thread) for the
              // tasks per plan task, which 1.11's PlanningBehavior asks without the scan.
              TASKS_PER_PLAN_TASK.set(
                  Integer.parseInt(props.getOrDefault("test.plan.tasks-per-plan-task", "100")));
              return async;
            }

            @Override
            public int numberFileScanTasksPerPlanTask() {
              Integer n = TASKS_PER_PLAN_TASK.get();
              return n == null ? 100 : n;
            }
          });
    }
  }

  static final ThreadLocal<Integer> TASKS_PER_PLAN_TASK = new ThreadLocal<>();

  static ExecutorService planningPool() {
    try {
      Field f = CatalogHandlers.class.getDeclaredField("ASYNC_PLANNING_POOL");
      f.setAccessible(true);
      return (ExecutorService) f.get(null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot reach CatalogHandlers.ASYNC_PLANNING_POOL", e);
    }
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    System.getenv().forEach((k, v) -> {
      if (k.startsWith("CATALOG_")) {
        String key = k.substring("CATALOG_".length()).replace("__", "-").replace("_", ".");
        props.put(key.toLowerCase(Locale.ROOT), v);
      }
    });
    props.putIfAbsent("catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog");
    props.putIfAbsent("jdbc.schema-version", "V1");
    Catalog catalog = CatalogUtil.buildIcebergCatalog("rest_backend", props, new Configuration());
    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(new Adapter(catalog))), "/*");
    Server server = new Server(Integer.parseInt(props.getOrDefault("rest.port", "8181")));
    server.setHandler(context);
    server.start();
    server.join();
  }
}
