// Writes the Spark golden files of crates/jvm/tests/data/spark/ with Spark's own sketch
// classes. Run once, by hand (no Spark runs in the tests); the files and spark.txt are
// committed, this program too, Spark's code is not. How the files were made:
//
//   pip download pyspark==4.3.0 --no-deps -d /tmp/pyspark
//   tar xzf /tmp/pyspark/pyspark-4.3.0.tar.gz -C /tmp/pyspark \
//       pyspark-4.3.0/deps/jars/spark-sketch_2.13-4.3.0.jar
//   JAR=/tmp/pyspark/pyspark-4.3.0/deps/jars/spark-sketch_2.13-4.3.0.jar
//   javac -cp $JAR -d /tmp/sg crates/jvm/tests/java/SparkGolden.java
//   java -cp /tmp/sg:$JAR SparkGolden crates/jvm/tests/data/spark > crates/jvm/tests/data/spark/spark.txt
//
// Each filter holds keys 0..N-1 (made as the Rust test makes them); <name>.absent holds
// Spark's answers to keys N..N+PROBES-1, one bit a key, LSB first. spark.txt has one line a
// file: name version k seed bitSize cardinality expectedFpp.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import org.apache.spark.util.sketch.BloomFilter;

public class SparkGolden {
  static final int N = 1000;
  static final int PROBES = 10000;
  static final String[] SUFFIX = {"", "-\u00e9", "-\uD83D\uDD11"};

  static Object key(String kind, long i) {
    switch (kind) {
      case "long": return i * 0x9E3779B97F4A7C15L;
      case "int": return (int) (i * 0x9E3779B9L);
      case "str": return "key-" + i + SUFFIX[(int) (i % 3)];
      case "bytes": return ("b" + i).repeat(1 + (int) (i % 3)).getBytes(StandardCharsets.UTF_8);
      default: throw new IllegalArgumentException(kind);
    }
  }

  static void write(Path dir, String name, String kind, BloomFilter f) throws IOException {
    for (long i = 0; i < N; i++) f.put(key(kind, i));
    for (long i = 0; i < N; i++) {
      if (!f.mightContain(key(kind, i))) throw new AssertionError("false negative");
    }
    try (OutputStream out = Files.newOutputStream(dir.resolve(name + ".bin"))) {
      f.writeTo(out);
    }
    byte[] bits = new byte[PROBES / 8];
    for (int j = 0; j < PROBES; j++) {
      if (f.mightContain(key(kind, N + j))) bits[j >> 3] |= (byte) (1 << (j & 7));
    }
    Files.write(dir.resolve(name + ".absent"), bits);
    byte[] b = Files.readAllBytes(dir.resolve(name + ".bin"));
    int version = ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    int k = ((b[4] & 0xff) << 24) | ((b[5] & 0xff) << 16) | ((b[6] & 0xff) << 8) | (b[7] & 0xff);
    int seed = version == 2 ? ((b[8] & 0xff) << 24) | ((b[9] & 0xff) << 16) | ((b[10] & 0xff) << 8) | (b[11] & 0xff) : 0;
    System.out.println(name + " " + version + " " + k + " " + seed + " " + f.bitSize() + " "
        + f.cardinality() + " " + f.expectedFpp());
  }

  public static void main(String[] args) throws IOException {
    Path dir = Paths.get(args[0]);
    Files.createDirectories(dir);
    long bits = BloomFilter.optimalNumOfBits(N, 0.03);
    for (String kind : new String[] {"long", "int", "str", "bytes"}) {
      write(dir, "v1-" + kind, kind, BloomFilter.create(BloomFilter.Version.V1, N, bits, 0));
      write(dir, "v2-" + kind, kind, BloomFilter.create(N, 0.03));
    }
    // A seed, and a size that is not a multiple of 64 bits.
    write(dir, "v2-str-seed", "str", BloomFilter.create(BloomFilter.Version.V2, N, 10001, -123456789));
    write(dir, "v1-long-small", "long", BloomFilter.create(BloomFilter.Version.V1, N, 4001, 0));
  }
}
