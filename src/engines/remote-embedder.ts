import type { Embedder } from "./embedder";
import { RemoteClient, RemoteEngineError, type RemoteEndpoint, type RemotePolicy } from "./remote-http";

type EmbeddingsResponse = { data?: { index?: number; embedding?: number[] }[] };

/** Texts per request: servers cap a batch (TEI at 32 by default), and a smaller one retries cheaply. */
const BATCH = 32;

/** The server's vectors are not as long as the search index's: nothing of the batch may be stored. */
export class EmbeddingDimensionError extends RemoteEngineError {}

/**
 * Text to vectors on a remote OpenAI-compatible server (`POST /embeddings`: vLLM, Hugging Face
 * TEI, Ollama, LocalAI). The dimension is learnt from the server with one short call, once,
 * and every answer is checked against it before it is returned: the index was built for that
 * dimension, and a server that swapped its model meanwhile must not write vectors of another
 * length into it (decision 189).
 */
export class RemoteEmbedder implements Embedder {
  readonly model: string;
  private readonly client: RemoteClient;
  private learnt: Promise<number> | null = null;

  constructor(endpoint: RemoteEndpoint, policy: RemotePolicy) {
    this.model = endpoint.model;
    this.client = new RemoteClient("embedding", endpoint, policy);
  }

  /** One real call, one attempt (`parley doctor`): the vectors' length, or the error naming the server. */
  async probe(): Promise<string> {
    const [vector] = await this.request(["parley doctor"], true);
    return `${vector?.length ?? 0} dimensions`;
  }

  dimension(): Promise<number> {
    this.learnt ??= this.request(["dimension"])
      .then(([vector]) => {
        if (!vector?.length) throw new RemoteEngineError(`The embedding server at ${this.client.url} answered an empty vector.`, 200);
        return vector.length;
      })
      .catch((err) => {
        this.learnt = null; // a server down at start is asked again at the next check
        throw err;
      });
    return this.learnt;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const dimension = await this.dimension();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += BATCH) {
      for (const vector of await this.request(texts.slice(i, i + BATCH))) {
        if (vector.length !== dimension) {
          this.learnt = null; // the next index check asks again, and rebuilds the index for the new length
          throw new EmbeddingDimensionError(
            `The embedding server at ${this.client.url} returned vectors of ${vector.length} numbers for ${this.model}; the search index holds ${dimension}. Nothing was stored; the next index check rebuilds the index for the server's model.`,
            200,
          );
        }
        vectors.push(vector);
      }
    }
    return vectors;
  }

  private async request(input: string[], once = false): Promise<Float32Array[]> {
    const body = JSON.stringify({ model: this.model, input, encoding_format: "float" });
    const parsed = await this.client.postJson<EmbeddingsResponse>({ path: "/embeddings", body, contentType: "application/json", once });
    const rows = parsed.data ?? [];
    if (rows.length !== input.length || rows.some((r) => !Array.isArray(r.embedding)))
      throw new RemoteEngineError(`The embedding server at ${this.client.url} answered ${rows.length} vectors for ${input.length} texts.`, 200);
    // The protocol allows any order; index says which input each vector is for.
    return [...rows].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((r) => Float32Array.from(r.embedding!));
  }
}
