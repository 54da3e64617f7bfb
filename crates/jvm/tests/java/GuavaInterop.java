// bloomkit's interop driver for Guava's BloomFilter: run by crates/jvm/tests/guava.rs
// (compiled with `javac -cp /usr/share/java/guava.jar`), and by benches/examples/jvm.rs for
// the timing loop. It builds, reads and answers filters with the real Guava; the Rust side
// compares. Keys are made the same way on both sides (key(funnel, i) here,
// `key_text` / `long_key` / ... in the Rust test).
//
// Modes (files are named guava-<funnel>-<ordinal>-<fpp>.bin or rust-<funnel>-<ordinal>-<fpp>.bin):
//   build <dir> <n> <fpp>...   every funnel x both strategies x each fpp: keys 0..n-1 put,
//                               the file written, the answers to keys n..2n-1 written to
//                               <file>.absent (one bit a key, LSB first); one stats line each
//   read <dir> <n>             every rust-*.bin in <dir>: read with its funnel, answers to
//                               keys 0..n-1 to <file>.present and n..2n-1 to <file>.absent
//   sizes <n>,<fpp>...         create()'s bit size and k for each pair
//   hashes                     murmur3_128 of a few inputs (asLong, and both halves)
//   time <file> <funnel> <n>   reads <file>, times lookups of keys 0..n-1 (best of 3)
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.hash.HashCode;
import com.google.common.hash.Hashing;
import java.io.*;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

public class GuavaInterop {
  static final String[] FUNNELS = {"utf8", "chars", "long", "int", "bytes"};

  @SuppressWarnings("unchecked")
  static Funnel<Object> funnel(String name) {
    switch (name) {
      case "utf8": return (Funnel<Object>) (Funnel<?>) Funnels.stringFunnel(StandardCharsets.UTF_8);
      case "chars": return (Funnel<Object>) (Funnel<?>) Funnels.unencodedCharsFunnel();
      case "long": return (Funnel<Object>) (Funnel<?>) Funnels.longFunnel();
      case "int": return (Funnel<Object>) (Funnel<?>) Funnels.integerFunnel();
      case "bytes": return (Funnel<Object>) (Funnel<?>) Funnels.byteArrayFunnel();
      default: throw new IllegalArgumentException(name);
    }
  }

  static final String[] SUFFIX = {"", "-\u00e9", "-\uD83D\uDD11"};

  static String text(long i) {
    return "key-" + i + SUFFIX[(int) (i % 3)];
  }

  static Object key(String funnel, long i) {
    switch (funnel) {
      case "utf8":
      case "chars": return text(i);
      case "long": return i * 0x9E3779B97F4A7C15L;
      case "int": return (int) (i * 0x9E3779B9L);
      case "bytes": return ("b" + i).repeat(1 + (int) (i % 3)).getBytes(StandardCharsets.UTF_8);
      default: throw new IllegalArgumentException(funnel);
    }
  }

  @SuppressWarnings("unchecked")
  static BloomFilter<Object> create(String funnel, long n, double fpp, int ordinal) throws Exception {
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object strategy = strategies.getEnumConstants()[ordinal];
    Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Method m = BloomFilter.class.getDeclaredMethod("create", Funnel.class, long.class, double.class, strategyType);
    m.setAccessible(true);
    return (BloomFilter<Object>) m.invoke(null, funnel(funnel), n, fpp, strategy);
  }

  static byte[] answers(BloomFilter<Object> f, String funnel, long from, long to) {
    byte[] bits = new byte[(int) ((to - from + 7) / 8)];
    for (long i = from; i < to; i++) {
      if (f.mightContain(key(funnel, i))) {
        bits[(int) ((i - from) >> 3)] |= (byte) (1 << ((i - from) & 7));
      }
    }
    return bits;
  }

  static String stats(String name, BloomFilter<Object> f, byte[] present, long n) {
    long misses = 0;
    for (long i = 0; i < n; i++) {
      if ((present[(int) (i >> 3)] >> (i & 7) & 1) == 0) misses++;
    }
    // bitSize() is package-private: m from the bytes' word count.
    return name + " expectedFpp=" + f.expectedFpp() + " approximateElementCount="
        + f.approximateElementCount() + " falseNegatives=" + misses;
  }

  public static void main(String[] args) throws Exception {
    switch (args[0]) {
      case "build": {
        Path dir = Paths.get(args[1]);
        long n = Long.parseLong(args[2]);
        for (int a = 3; a < args.length; a++) {
          double fpp = Double.parseDouble(args[a]);
          for (String funnel : FUNNELS) {
            for (int ordinal = 0; ordinal < 2; ordinal++) {
              BloomFilter<Object> f = create(funnel, n, fpp, ordinal);
              for (long i = 0; i < n; i++) f.put(key(funnel, i));
              String name = "guava-" + funnel + "-" + ordinal + "-" + args[a] + ".bin";
              try (OutputStream out = new BufferedOutputStream(Files.newOutputStream(dir.resolve(name)))) {
                f.writeTo(out);
              }
              Files.write(dir.resolve(name + ".absent"), answers(f, funnel, n, 2 * n));
              System.out.println(stats(name, f, answers(f, funnel, 0, n), n));
            }
          }
        }
        break;
      }
      case "read": {
        Path dir = Paths.get(args[1]);
        long n = Long.parseLong(args[2]);
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, "rust-*.bin")) {
          for (Path p : ds) files.add(p);
        }
        Collections.sort(files);
        for (Path p : files) {
          String name = p.getFileName().toString();
          String funnel = name.split("-")[1];
          BloomFilter<Object> f;
          try (InputStream in = new BufferedInputStream(Files.newInputStream(p))) {
            f = BloomFilter.readFrom(in, funnel(funnel));
          }
          byte[] present = answers(f, funnel, 0, n);
          Files.write(dir.resolve(name + ".present"), present);
          Files.write(dir.resolve(name + ".absent"), answers(f, funnel, n, 2 * n));
          System.out.println(stats(name, f, present, n));
        }
        break;
      }
      case "sizes": {
        for (int a = 1; a < args.length; a++) {
          String[] p = args[a].split(",");
          BloomFilter<Object> f;
          try {
            f = create("long", Long.parseLong(p[0]), Double.parseDouble(p[1]), 1);
          } catch (java.lang.reflect.InvocationTargetException e) {
            System.out.println(args[a] + " refused");
            continue;
          }
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          f.writeTo(out);
          byte[] b = out.toByteArray();
          int k = b[1] & 0xff;
          long words = ((b[2] & 0xffL) << 24) | ((b[3] & 0xffL) << 16) | ((b[4] & 0xffL) << 8) | (b[5] & 0xffL);
          System.out.println(args[a] + " words=" + words + " k=" + k);
        }
        break;
      }
      case "hashes": {
        String[] inputs = {"", "hello", "key-1-\u00e9", "0123456789abcdef", "0123456789abcdefg"};
        for (String s : inputs) {
          HashCode h = Hashing.murmur3_128().hashString(s, StandardCharsets.UTF_8);
          byte[] b = h.asBytes();
          System.out.println("utf8 " + s + " " + h.asLong() + " " + h);
        }
        System.out.println("long 42 " + Hashing.murmur3_128().hashLong(42L).asLong());
        System.out.println("int 42 " + Hashing.murmur3_128().hashInt(42).asLong());
        System.out.println("chars key-2-\uD83D\uDD11 " + Hashing.murmur3_128().hashUnencodedChars("key-2-\uD83D\uDD11").asLong());
        break;
      }
      case "time": {
        Path file = Paths.get(args[1]);
        String funnel = args[2];
        int n = Integer.parseInt(args[3]);
        BloomFilter<Object> f;
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file))) {
          f = BloomFilter.readFrom(in, funnel(funnel));
        }
        // Keys made before the clock starts, as the Rust side does: half present, half not
        // (keys 0..n/2-1 and n..n+n/2-1 of a filter of keys 0..n-1), interleaved.
        Object[] keys = new Object[n];
        for (int i = 0; i < n; i++) keys[i] = key(funnel, (i % 2 == 0) ? i / 2 : n + i / 2);
        long best = Long.MAX_VALUE;
        long hits = 0;
        for (int round = 0; round < 3; round++) {
          long start = System.nanoTime();
          hits = 0;
          for (int i = 0; i < n; i++) if (f.mightContain(keys[i])) hits++;
          best = Math.min(best, System.nanoTime() - start);
        }
        System.out.println("guava ns_per_lookup=" + ((double) best / n) + " hits=" + hits);
        break;
      }
      default:
        throw new IllegalArgumentException("unknown mode " + args[0]);
    }
  }
}
