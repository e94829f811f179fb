// SPDX-License-Identifier: MIT
// Copyright (c) 2026 The babelqueue-cpp authors
//
// The official Pulsar Java client (pulsar-client-original, among the test broker's jars) as a
// peer of the codec tests (issue 13): for each compression type given, a batching producer on
// topic PREFIX + the type in lower case sends COUNT messages "message I of TYPE " + 2048 x with property
// i=I as one batch, and prints "peer: sent COUNT TYPE" (or "peer: failed TYPE: reason").
// Run with Java's source launcher:
//   java -cp 'DIST/libs/*' PulsarJavaPeer.java SERVICE_URL PREFIX COUNT LZ4 ZLIB ...
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.pulsar.client.api.CompressionType;
import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;

public class PulsarJavaPeer {
  // The client leaves batches below 4 KiB uncompressed: 2 KiB of padding per message.
  static final String PAD = "x".repeat(2048);

  public static void main(String[] args) throws Exception {
    String url = args[0];
    String prefix = args[1];
    int count = Integer.parseInt(args[2]);
    try (PulsarClient client = PulsarClient.builder().serviceUrl(url).build()) {
      for (int t = 3; t < args.length; ++t) {
        String type = args[t];
        try (Producer<byte[]> producer = client.newProducer().topic(prefix + type.toLowerCase())
                 .compressionType(CompressionType.valueOf(type)).enableBatching(true)
                 .batchingMaxMessages(count).batchingMaxPublishDelay(10, TimeUnit.SECONDS)
                 .create()) {
          List<CompletableFuture<MessageId>> sent = new ArrayList<>();
          for (int i = 0; i < count; ++i)
            sent.add(producer.newMessage().value(("message " + i + " of " + type + " " + PAD).getBytes())
                         .property("i", Integer.toString(i)).sendAsync());
          producer.flush();
          for (CompletableFuture<MessageId> f : sent) f.get(30, TimeUnit.SECONDS);
          System.out.println("peer: sent " + count + " " + type);
        } catch (Exception e) {
          System.out.println("peer: failed " + type + ": " + e);
        }
      }
    }
  }
}
