// Computes single-value serialization and partition-transform test vectors with Iceberg Java.
// Used by generate_golden.py: compiled against the iceberg-spark-runtime jar and run standalone.
// (py4j cannot pass a java.lang.Long whose value fits in an int, so these calls need real Java.)
//
// stdin: one request per line, tab-separated: <op> <type> <value>
//   op    = ser | hash | identity | bucket[N] | truncate[W] | year | month | day | hour
//   type  = an Iceberg primitive type string (int, long, decimal(9, 2), fixed[4], timestamptz, ...)
//   value = text form: numbers as decimal text; date/time/timestamp(tz) as ISO text or as a plain
//           integer (days / micros); string, binary and fixed as hex of the bytes; uuid as text.
// stdout, one line per request:
//   ser:        ok<TAB>hex
//   hash:       ok<TAB>murmur3 hash (signed int)
//   transforms: ok<TAB>result<TAB>result_hex<TAB>human string<TAB>result type
//   failure:    err<TAB>message
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import org.apache.iceberg.expressions.Literal;
import org.apache.iceberg.transforms.Transform;
import org.apache.iceberg.transforms.Transforms;
import org.apache.iceberg.types.Conversions;
import org.apache.iceberg.types.Type;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.util.BucketUtil;

public class GoldenVectors {
  static byte[] unhex(String s) {
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      out[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
    }
    return out;
  }

  static String hex(ByteBuffer buf) {
    ByteBuffer b = buf.duplicate();
    StringBuilder sb = new StringBuilder();
    while (b.hasRemaining()) {
      sb.append(String.format("%02x", b.get() & 0xff));
    }
    return sb.toString();
  }

  static boolean isInteger(String v) {
    return v.matches("-?[0-9]+");
  }

  static Object parse(Type t, String v) {
    switch (t.typeId()) {
      case BOOLEAN:
        return Boolean.parseBoolean(v);
      case INTEGER:
        return Integer.parseInt(v);
      case LONG:
        return Long.parseLong(v);
      case FLOAT:
        return Float.parseFloat(v);
      case DOUBLE:
        return Double.parseDouble(v);
      case DATE:
        return isInteger(v) ? (Object) Integer.parseInt(v) : Literal.of(v).to(t).value();
      case TIME:
      case TIMESTAMP:
        return isInteger(v) ? (Object) Long.parseLong(v) : Literal.of(v).to(t).value();
      case STRING:
        return new String(unhex(v), StandardCharsets.UTF_8);
      case UUID:
        return UUID.fromString(v);
      case FIXED:
      case BINARY:
        return ByteBuffer.wrap(unhex(v));
      case DECIMAL:
        return new BigDecimal(v);
      default:
        throw new IllegalArgumentException("unsupported type " + t);
    }
  }

  static int hash(Type t, Object v) {
    switch (t.typeId()) {
      case INTEGER:
      case DATE:
        return BucketUtil.hash((Integer) v);
      case LONG:
      case TIME:
      case TIMESTAMP:
        return BucketUtil.hash((Long) v);
      case STRING:
        return BucketUtil.hash((CharSequence) v);
      case UUID:
        return BucketUtil.hash((UUID) v);
      case FIXED:
      case BINARY:
        return BucketUtil.hash((ByteBuffer) v);
      case DECIMAL:
        return BucketUtil.hash((BigDecimal) v);
      default:
        throw new IllegalArgumentException("cannot hash " + t);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static String run(String op, Type t, Object v) {
    if (op.equals("ser")) {
      return "ok\t" + hex(Conversions.toByteBuffer(t, v));
    }
    if (op.equals("hash")) {
      return "ok\t" + hash(t, v);
    }
    Transform transform = Transforms.fromString(op);
    Type resultType = transform.getResultType(t);
    Object result = transform.bind(t).apply(v);
    String resultText =
        result instanceof ByteBuffer ? hex((ByteBuffer) result) : String.valueOf(result);
    String resultHex = result == null ? "" : hex(Conversions.toByteBuffer(resultType, result));
    String human = transform.toHumanString(resultType, result);
    return "ok\t" + resultText + "\t" + resultHex + "\t" + human + "\t" + resultType;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      String[] parts = line.split("\t", -1);
      String out;
      try {
        Type t = Types.fromPrimitiveString(parts[1]);
        out = run(parts[0], t, parse(t, parts[2]));
      } catch (Exception e) {
        String msg = String.valueOf(e.getMessage()).replace('\t', ' ').replace('\n', ' ');
        out = "err\t" + e.getClass().getSimpleName() + ": " + msg;
      }
      System.out.println(out);
    }
  }
}
