// Iceberg Java (the oracle) for the property tests and the transform tests: partition
// transforms, single-value serde (Conversions, SingleValueParser), the row Evaluator, the
// inclusive and strict metrics evaluators, and partition projection (Projections + Evaluator).
//
// args: transform <in file> <out file>   lines "type \t transform \t value" -> one result a line
//       serve                             one JSON request a line on stdin, one JSON answer a
//                                         line on stdout (see `serve` below); used by
//                                         tests/support/java_oracle.py
//
// Values travel in one text form ("codec"): null is \N; boolean true/false; int, long, date,
// time and timestamps as their integer storage; float and double as the hex of their IEEE
// bits; string as the hex of its UTF-8; binary and fixed as hex; uuid as text; decimal as its
// unscaled integer (the scale is the type's).
import java.io.*;
import java.math.*;
import java.nio.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.iceberg.*;
import org.apache.iceberg.expressions.*;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.JsonNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.iceberg.shaded.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.JsonUtil;
import org.apache.iceberg.util.SerializableFunction;

public class PropertyOracle {
  static final ObjectMapper MAPPER = JsonUtil.mapper();

  static byte[] unhex(String s) {
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    return b;
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder();
    for (byte x : b) sb.append(String.format("%02x", x));
    return sb.toString();
  }

  static byte[] bytes(ByteBuffer buf) {
    ByteBuffer b = buf.duplicate();
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }

  static Object parse(Type t, String v) {
    if (v == null || v.equals("\\N")) return null;
    switch (t.typeId()) {
      case BOOLEAN: return Boolean.parseBoolean(v);
      case INTEGER: case DATE: return Integer.parseInt(v);
      case LONG: case TIME: case TIMESTAMP: case TIMESTAMP_NANO: return Long.parseLong(v);
      case FLOAT: return Float.intBitsToFloat(Integer.parseUnsignedInt(v, 16));
      case DOUBLE: return Double.longBitsToDouble(Long.parseUnsignedLong(v, 16));
      case STRING: return new String(unhex(v), StandardCharsets.UTF_8);
      case BINARY: case FIXED: return ByteBuffer.wrap(unhex(v));
      case UUID: return UUID.fromString(v);
      case DECIMAL: return new BigDecimal(new BigInteger(v), ((Types.DecimalType) t).scale());
      default: throw new IllegalArgumentException("type " + t);
    }
  }

  static String render(Object o) {
    if (o == null) return "\\N";
    if (o instanceof Integer || o instanceof Long || o instanceof Boolean) return o.toString();
    if (o instanceof Float) return String.format("%08x", Float.floatToRawIntBits((Float) o));
    if (o instanceof Double) return String.format("%016x", Double.doubleToRawLongBits((Double) o));
    if (o instanceof CharSequence) return hex(o.toString().getBytes(StandardCharsets.UTF_8));
    if (o instanceof ByteBuffer) return hex(bytes((ByteBuffer) o));
    if (o instanceof BigDecimal) return ((BigDecimal) o).unscaledValue().toString();
    if (o instanceof UUID) return o.toString();
    throw new IllegalArgumentException("result " + o.getClass());
  }

  // ---- transforms ---------------------------------------------------------------------

  static final Map<String, SerializableFunction<Object, Object>> TRANSFORMS = new HashMap<>();

  @SuppressWarnings("unchecked")
  static String transform(String type, String transform, String value) {
    Type t = Types.fromPrimitiveString(type);
    SerializableFunction<Object, Object> f = TRANSFORMS.computeIfAbsent(type + "|" + transform,
        k -> ((Transform<Object, Object>) Transforms.fromString(t, transform)).bind(t));
    try {
      return render(f.apply(parse(t, value)));
    } catch (ArithmeticException | java.time.DateTimeException e) {
      return "ERROR";
    }
  }

  // ---- expressions ----------------------------------------------------------------------

  /** The literal for a predicate on `term` of `schema` (codec value of the column's type;
   * a long for timestamp_ns columns: Java reads a long literal as microseconds). */
  static Object literal(Schema schema, String term, String v) {
    Type t = schema.findType(term);
    if (t.typeId() == Type.TypeID.TIMESTAMP_NANO) return Long.parseLong(v);
    return parse(t, v);
  }

  static Expression expr(Schema schema, JsonNode n) {
    String type = n.get("type").asText();
    switch (type) {
      case "true": return Expressions.alwaysTrue();
      case "false": return Expressions.alwaysFalse();
      case "and": return Expressions.and(expr(schema, n.get("left")), expr(schema, n.get("right")));
      case "or": return Expressions.or(expr(schema, n.get("left")), expr(schema, n.get("right")));
      case "not": return Expressions.not(expr(schema, n.get("child")));
      default: break;
    }
    String term = n.get("term").asText();
    switch (type) {
      case "is-null": return Expressions.isNull(term);
      case "not-null": return Expressions.notNull(term);
      case "is-nan": return Expressions.isNaN(term);
      case "not-nan": return Expressions.notNaN(term);
      case "in": case "not-in": {
        List<Object> values = new ArrayList<>();
        for (JsonNode v : n.get("values")) values.add(literal(schema, term, v.asText()));
        return type.equals("in") ? Expressions.in(term, values) : Expressions.notIn(term, values);
      }
      default: break;
    }
    Object v = literal(schema, term, n.get("value").asText());
    switch (type) {
      case "lt": return Expressions.lessThan(term, v);
      case "lt-eq": return Expressions.lessThanOrEqual(term, v);
      case "gt": return Expressions.greaterThan(term, v);
      case "gt-eq": return Expressions.greaterThanOrEqual(term, v);
      case "eq": return Expressions.equal(term, v);
      case "not-eq": return Expressions.notEqual(term, v);
      case "starts-with": return Expressions.startsWith(term, (String) v);
      case "not-starts-with": return Expressions.notStartsWith(term, (String) v);
      default: throw new IllegalArgumentException("expression type " + type);
    }
  }

  static final class Row implements StructLike {
    final Object[] values;

    Row(Object[] values) {
      this.values = values;
    }

    public int size() {
      return values.length;
    }

    public <T> T get(int pos, Class<T> javaClass) {
      return javaClass.cast(values[pos]);
    }

    public <T> void set(int pos, T value) {
      values[pos] = value;
    }
  }

  static Row row(Types.StructType struct, JsonNode values) {
    List<Types.NestedField> fields = struct.fields();
    Object[] out = new Object[fields.size()];
    for (int i = 0; i < out.length; i++) {
      JsonNode v = values.get(i);
      out[i] = v.isNull() ? null : parse(fields.get(i).type(), v.asText());
    }
    return new Row(out);
  }

  // ---- requests -------------------------------------------------------------------------

  static String error(Exception e) {
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }

  interface Item {
    void fill(Type type, String arg, ObjectNode out) throws Exception;
  }

  /** One object per [type, arg] item of the request: what `fill` puts, or {error}. */
  static ArrayNode each(JsonNode req, Item fill) {
    ArrayNode out = MAPPER.createArrayNode();
    for (JsonNode it : req.get("items")) {
      ObjectNode o = out.addObject();
      try {
        fill.fill(Types.fromPrimitiveString(it.get(0).asText()), it.get(1).asText(), o);
      } catch (Exception e) {
        o.removeAll();
        o.put("error", error(e));
      }
    }
    return out;
  }

  static JsonNode answer(JsonNode req) {
    ArrayNode out = MAPPER.createArrayNode();
    String cmd = req.get("cmd").asText();
    switch (cmd) {
      case "transform":
        for (JsonNode it : req.get("items")) {
          out.add(transform(it.get(0).asText(), it.get(1).asText(), it.get(2).asText()));
        }
        return out;
      case "serde":
        // [type, codec value] -> {bytes, json} from the value, or {error}
        return each(req, (t, arg, o) -> {
          Object v = parse(t, arg);
          o.put("bytes", hex(bytes(Conversions.toByteBuffer(t, v))));
          o.put("json", SingleValueParser.toJson(t, v));
        });
      case "from_json":
        // [type, json text] -> {bytes, value} or {error}
        return each(req, (t, arg, o) -> {
          Object v = SingleValueParser.fromJson(t, arg);
          o.put("bytes", hex(bytes(Conversions.toByteBuffer(t, v))));
          o.put("value", render(v));
        });
      case "from_bytes":
        // [type, hex] -> {json, value} or {error}
        return each(req, (t, arg, o) -> {
          Object v = Conversions.fromByteBuffer(t, ByteBuffer.wrap(unhex(arg)));
          o.put("json", SingleValueParser.toJson(t, v));
          o.put("value", render(v));
        });
      default:
        break;
    }
    Schema schema = SchemaParser.fromJson(req.get("schema").toString());
    Expression e = expr(schema, req.get("expr"));
    switch (cmd) {
      case "eval": {
        // rows (codec values in schema order) -> true/false
        Evaluator ev = new Evaluator(schema.asStruct(), e, true);
        for (JsonNode r : req.get("rows")) out.add(ev.eval(row(schema.asStruct(), r)));
        return out;
      }
      case "metrics": {
        // files {records, value_counts, null_counts, nan_counts, lower, upper}
        //   -> {inclusive, strict, lower, upper} (the bounds' binary form, hex by field id)
        InclusiveMetricsEvaluator inc = new InclusiveMetricsEvaluator(schema, e, true);
        StrictMetricsEvaluator strict = new StrictMetricsEvaluator(schema, e, true);
        int i = 0;
        for (JsonNode f : req.get("files")) {
          Map<Integer, ByteBuffer> lower = new HashMap<>();
          Map<Integer, ByteBuffer> upper = new HashMap<>();
          for (Map.Entry<String, JsonNode> b : iter(f.get("lower"))) {
            Type t = schema.findType(Integer.parseInt(b.getKey()));
            lower.put(Integer.parseInt(b.getKey()), Conversions.toByteBuffer(t, parse(t, b.getValue().asText())));
          }
          for (Map.Entry<String, JsonNode> b : iter(f.get("upper"))) {
            Type t = schema.findType(Integer.parseInt(b.getKey()));
            upper.put(Integer.parseInt(b.getKey()), Conversions.toByteBuffer(t, parse(t, b.getValue().asText())));
          }
          Metrics m = new Metrics(f.get("records").asLong(), null, counts(f.get("value_counts")),
              counts(f.get("null_counts")), counts(f.get("nan_counts")), lower, upper);
          DataFile file = DataFiles.builder(PartitionSpec.unpartitioned())
              .withPath("/f" + (i++) + ".parquet").withFormat(FileFormat.PARQUET)
              .withFileSizeInBytes(100).withMetrics(m).build();
          ObjectNode o = out.addObject();
          o.put("inclusive", inc.eval(file));
          o.put("strict", strict.eval(file));
          ObjectNode lo = o.putObject("lower");
          lower.forEach((id, b) -> lo.put(id.toString(), hex(bytes(b))));
          ObjectNode up = o.putObject("upper");
          upper.forEach((id, b) -> up.put(id.toString(), hex(bytes(b))));
        }
        return out;
      }
      case "project": {
        // partition tuples of rows -> {partition: [json single values], inclusive, strict}
        PartitionSpec spec = PartitionSpecParser.fromJson(schema, req.get("spec").toString());
        Types.StructType ptype = spec.partitionType();
        Evaluator inc = new Evaluator(ptype, Projections.inclusive(spec).project(e), true);
        Evaluator strict = new Evaluator(ptype, Projections.strict(spec).project(e), true);
        for (JsonNode r : req.get("rows")) {
          PartitionKey key = new PartitionKey(spec, schema);
          key.partition(row(schema.asStruct(), r));
          ObjectNode o = out.addObject();
          ArrayNode tuple = o.putArray("partition");
          for (int p = 0; p < ptype.fields().size(); p++) {
            Type t = ptype.fields().get(p).type();
            Object v = key.get(p, Object.class);
            tuple.add(v == null ? null : SingleValueParser.toJson(t, v));
          }
          o.put("inclusive", inc.eval(key));
          o.put("strict", strict.eval(key));
        }
        return out;
      }
      default:
        throw new IllegalArgumentException("command " + cmd);
    }
  }

  static Iterable<Map.Entry<String, JsonNode>> iter(JsonNode obj) {
    List<Map.Entry<String, JsonNode>> out = new ArrayList<>();
    if (obj != null) obj.fields().forEachRemaining(out::add);
    return out;
  }

  static Map<Integer, Long> counts(JsonNode obj) {
    Map<Integer, Long> out = new HashMap<>();
    for (Map.Entry<String, JsonNode> c : iter(obj)) out.put(Integer.parseInt(c.getKey()), c.getValue().asLong());
    // icefloe's DataFile cannot tell an empty map from an absent one (both: not recorded)
    return out.isEmpty() ? null : out;
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("transform")) {
      try (BufferedReader r = java.nio.file.Files.newBufferedReader(Paths.get(args[1]));
           BufferedWriter w = java.nio.file.Files.newBufferedWriter(Paths.get(args[2]))) {
        String line;
        while ((line = r.readLine()) != null) {
          String[] p = line.split("\t", -1);
          w.write(transform(p[0], p[1], p[2]));
          w.write('\n');
        }
      }
      return;
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    String line;
    while ((line = in.readLine()) != null) {
      ObjectNode o = MAPPER.createObjectNode();
      try {
        o.set("result", answer(MAPPER.readTree(line)));
      } catch (Exception e) {
        StringWriter sw = new StringWriter();
        e.printStackTrace(new PrintWriter(sw));
        o.put("error", sw.toString());
      }
      out.println(MAPPER.writeValueAsString(o));
      out.flush();
    }
  }
}
