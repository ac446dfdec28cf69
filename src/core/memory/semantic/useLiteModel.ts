import * as fs from 'node:fs';
import * as path from 'node:path';
import { denseKernel, packRows, packWeights, ROWS, type DenseKernel } from './denseKernel';
import { UseLiteTokenizer } from './useLiteTokenizer';

/**
 * Universal Sentence Encoder lite, run from its weights: the graph that TensorFlow.js would run
 * (model.json's 317 nodes), written out as the two-layer transformer it is. One text at a time:
 * the graph pads a batch to its longest text and masks the padding, so a text's vector does not
 * depend on the others. The products run in denseKernel.ts; the rest (normalising, attention over
 * at most 128 tokens, pooling) is small and stays in JS. A test compares its vectors with
 * TensorFlow.js's on real transcript text.
 */

const K = 'module_apply_default/Encoder_en/KonaTransformer/';
const STACK = `${K}Encode/TransformerStack/`;
const ENCODE = `${K}Encode/`;
const HIDDEN = 'module/Encoder_en/hidden_layers/tanh_layer_0/';

/** What model.json says of its weights (tfjs's format, without quantization: the shipped file has none). */
interface Manifest {
  weightsManifest: { paths: string[]; weights: { name: string; shape: number[]; dtype: 'float32' | 'int32'; quantization?: unknown }[] }[];
}

interface Dense {
  inDim: number;
  outDim: number;
  /** Byte offsets of the packed weights and the bias in the kernel's memory. */
  w: number;
  b: number;
}

interface Norm {
  scale: Float32Array;
  bias: Float32Array;
}

interface Layer {
  heads: number;
  /** 1 / √(the head's width): the graph scales the queries by it. */
  queryScale: number;
  norm: Norm;
  qkv: Dense;
  output: Dense;
  /** Layer 0 widens its input (256) to the stack's width (512) for the residual. */
  residual?: Dense;
  ffnNorm: Norm;
  ffn1: Dense;
  ffn2: Dense;
}

/** The longest text the graph reads, in tokens (its ClipToMaxLength). */
const MAX_TOKENS = 128;
/** Layer norm's epsilon in the graph. */
const NORM_EPSILON = 1e-6;
/** The graph's floor under the squared length before it normalises the vector. */
const LENGTH_FLOOR = 1e-12;
/** The kernel's scratch is the packed rows of the widest input and one output of the widest layer. */
const WIDEST = 1536;

export class UseLiteModel {
  readonly dims = 512;
  private constructor(
    readonly tokenizer: UseLiteTokenizer,
    private readonly kernel: DenseKernel,
    private readonly heap: Float32Array,
    private readonly scratch: { x: number; y: number },
    private readonly embeddings: Float32Array,
    private readonly timescales: Float32Array,
    private readonly layers: [Layer, Layer],
    private readonly pool: Dense,
  ) {}

  /** Whether the products run as wasm SIMD (the bench prints it). */
  get simd(): boolean {
    return this.kernel.simd;
  }

  /** Reads model.json, its weight shards and vocab.json from `dir`; throws with the reason when they are not the expected model. */
  static load(dir: string): UseLiteModel {
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8')) as Manifest;
    const tensors = new Map<string, { shape: number[]; values: Float32Array | Int32Array }>();
    // Each group's shards read into one buffer, the tensors views of it: the load holds the file
    // once; what outlives it is the packed products in wasm memory and a copy of the embeddings.
    for (const group of manifest.weightsManifest) {
      const bytes = new ArrayBuffer(group.paths.reduce((n, p) => n + fs.statSync(path.join(dir, p)).size, 0));
      let filled = 0;
      for (const p of group.paths) {
        const fd = fs.openSync(path.join(dir, p), 'r');
        try {
          const size = fs.fstatSync(fd).size;
          for (let got = 0; got < size; ) got += fs.readSync(fd, new Uint8Array(bytes, filled + got, size - got), 0, size - got, got);
          filled += size;
        } finally {
          fs.closeSync(fd);
        }
      }
      let at = 0;
      for (const w of group.weights) {
        if (w.quantization) throw new Error(`${w.name} is quantized; this reader takes float32 and int32 only`);
        const count = w.shape.reduce((a, b) => a * b, 1);
        if (at + count * 4 > bytes.byteLength) throw new Error(`the weight shards end before ${w.name}`);
        tensors.set(w.name, { shape: w.shape, values: w.dtype === 'int32' ? new Int32Array(bytes, at, count) : new Float32Array(bytes, at, count) });
        at += count * 4;
      }
    }
    const tensor = (name: string, shape?: number[]): Float32Array => {
      const t = tensors.get(name);
      if (!t || t.values instanceof Int32Array) throw new Error(`the model has no float tensor ${name}`);
      if (shape && t.shape.join() !== shape.join()) throw new Error(`${name} is [${t.shape.join(', ')}], not [${shape.join(', ')}]`);
      return t.values;
    };
    const scalar = (name: string): number => {
      const t = tensors.get(name);
      if (!t || t.values.length !== 1) throw new Error(`the model has no scalar ${name}`);
      return t.values[0] as number;
    };
    if (scalar(`${K}ClipToMaxLength/Less/y`) !== MAX_TOKENS) throw new Error('the model reads another number of tokens than 128');
    if (Math.fround(scalar(`${STACK}Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x`)) !== Math.fround(NORM_EPSILON)) throw new Error('the model normalises with another epsilon');

    // Every product's weights, packed for the kernel, in one wasm memory with its scratch.
    // Each product is placed once its memory exists; until then it is listed with its tensors' names.
    const products: { d: Dense; name: string; bias: string }[] = [];
    const dense = (name: string, bias: string, inDim: number, outDim: number): Dense => {
      const d = { inDim, outDim, w: -1, b: -1 };
      products.push({ d, name, bias });
      return d;
    };
    const layer = (i: 0 | 1, width: number): Layer => {
      const L = `${STACK}Layer_${i}/TransformerLayer/`;
      const E = `${ENCODE}Layer_${i}/TransformerLayer/`;
      const M = `module/Encoder_en/KonaTransformer/Encode/Layer_${i}/TransformerLayer/MultiheadAttention/`;
      // Both layers split into the same number of heads; the graph keeps that constant once, under Layer_1.
      const heads = scalar(`${STACK}Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2`);
      const norm = (prefix: string, w: number): Norm => ({ scale: tensor(`${prefix}layer_norm_scale/ConcatPartitions/concat`, [w]).slice(), bias: tensor(`${prefix}layer_norm_bias/ConcatPartitions/concat`, [w]).slice() });
      return {
        heads,
        queryScale: scalar(`${L}MultiheadAttention/mul/y`),
        norm: norm(`${E}layer_prepostprocess/layer_norm/`, width),
        qkv: dense(`${M}qkv_transform_single/kernel/part_0`, `${E}MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat`, width, 3 * width),
        output: dense(`${M}output_transform_single/kernel/part_0`, `${E}MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat`, width, 512),
        residual: i === 0 ? dense(`${E}dense/kernel/ConcatPartitions/concat`, `${E}dense/bias/ConcatPartitions/concat`, width, 512) : undefined,
        ffnNorm: norm(`${E}FFN/layer_prepostprocess/layer_norm/`, 512),
        ffn1: dense(`${L}FFN/conv1/Tensordot/Reshape_1`, `${E}FFN/conv1/bias/ConcatPartitions/concat`, 512, 1536),
        ffn2: dense(`${L}FFN/conv2/Tensordot/Reshape_1`, `${E}FFN/conv2/bias/ConcatPartitions/concat`, 1536, 512),
      };
    };
    const layers: [Layer, Layer] = [layer(0, 256), layer(1, 512)];
    const pool = dense(`${HIDDEN}weights`, `${HIDDEN}bias`, 512, 512);
    const floats = products.reduce((n, { d }) => n + d.inDim * d.outDim + d.outDim, 0);
    const rows = Math.ceil(MAX_TOKENS / ROWS) * ROWS;
    const scratchFloats = rows * WIDEST * 2;
    const memory = new WebAssembly.Memory({ initial: Math.ceil(((floats + scratchFloats) * 4) / 65536) });
    const heap = new Float32Array(memory.buffer);
    let at = 0;
    for (const { d, name, bias } of products) {
      // The attention's products are stored as 1×1 convolutions.
      const shape = name.endsWith('part_0') ? [1, 1, d.inDim, d.outDim] : [d.inDim, d.outDim];
      packWeights(tensor(name, shape), d.inDim, d.outDim, heap, at);
      d.w = at * 4;
      at += d.inDim * d.outDim;
      heap.set(tensor(bias, [d.outDim]), at);
      d.b = at * 4;
      at += d.outDim;
    }
    const scratch = { x: at * 4, y: (at + rows * WIDEST) * 4 };
    const vocabulary = JSON.parse(fs.readFileSync(path.join(dir, 'vocab.json'), 'utf8')) as [string, number][];
    return new UseLiteModel(
      new UseLiteTokenizer(vocabulary),
      denseKernel(memory),
      heap,
      scratch,
      tensor('module/Embeddings_en', [8002, 256]).slice(),
      tensor(`${STACK}Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1`, [1, 128]).slice(),
      layers,
      pool,
    );
  }

  /** The text's unit vector of 512 dimensions. */
  embed(text: string): Float32Array {
    return this.embedTokens(this.tokenizer.encode(text));
  }

  private embedTokens(allTokens: readonly number[]): Float32Array {
    const tokens = allTokens.slice(0, MAX_TOKENS);
    const n = tokens.length;
    // The graph adds the embedding twice (once scattered, once with the timing signal) and the
    // position's timing signal: sin(position × timescale) then cos, 128 each.
    let x: Float32Array = new Float32Array(n * 256);
    for (let t = 0; t < n; t++) {
      const e = (tokens[t] as number) * 256;
      for (let d = 0; d < 128; d++) {
        const angle = Math.fround(t * (this.timescales[d] as number));
        x[t * 256 + d] = 2 * (this.embeddings[e + d] as number) + Math.sin(angle);
        x[t * 256 + 128 + d] = 2 * (this.embeddings[e + 128 + d] as number) + Math.cos(angle);
      }
    }
    for (const layer of this.layers) x = this.transformer(layer, x, n);
    // Mean over the tokens (an empty text gives zeros), then tanh(· W + b), then unit length.
    const mean = new Float32Array(512);
    for (let t = 0; t < n; t++) for (let d = 0; d < 512; d++) mean[d] = (mean[d] as number) + (x[t * 512 + d] as number);
    const count = Math.max(n, 1);
    for (let d = 0; d < 512; d++) mean[d] = (mean[d] as number) / count;
    const out = this.apply(this.pool, mean, 1);
    let squares = 0;
    for (let d = 0; d < 512; d++) {
      const v = Math.tanh(out[d] as number);
      out[d] = v;
      squares += v * v;
    }
    const inverse = 1 / Math.sqrt(Math.max(squares, LENGTH_FLOOR));
    for (let d = 0; d < 512; d++) out[d] = (out[d] as number) * inverse;
    return out;
  }

  /** One transformer layer: attention then the feed-forward block, each on normalised input with a residual. */
  private transformer(layer: Layer, x: Float32Array, n: number): Float32Array {
    const width = layer.qkv.inDim;
    const qkv = this.apply(layer.qkv, normalise(x, n, width, layer.norm), n);
    const attended = attention(qkv, n, width, layer.heads, layer.queryScale);
    const residual = layer.residual ? this.apply(layer.residual, x, n) : x;
    const h = add(this.apply(layer.output, attended, n), residual);
    const inner = this.apply(layer.ffn1, normalise(h, n, 512, layer.ffnNorm), n);
    for (let i = 0; i < inner.length; i++) if ((inner[i] as number) < 0) inner[i] = 0;
    return add(this.apply(layer.ffn2, inner, n), h);
  }

  /** x (n × inDim) · W + b, a new array. */
  private apply(d: Dense, x: Float32Array, n: number): Float32Array {
    const blocks = packRows(x, n, d.inDim, this.heap, this.scratch.x >> 2);
    this.kernel.dense(this.scratch.x, blocks, d.inDim, d.w, d.outDim, d.b, this.scratch.y);
    return this.heap.slice(this.scratch.y >> 2, (this.scratch.y >> 2) + n * d.outDim);
  }
}

/** Layer norm of each row, as the graph computes it: (x − mean) · rsqrt(variance + ε) · scale + bias. */
function normalise(x: Float32Array, n: number, width: number, norm: Norm): Float32Array {
  const out = new Float32Array(n * width);
  for (let t = 0; t < n; t++) {
    const row = t * width;
    let sum = 0;
    for (let d = 0; d < width; d++) sum += x[row + d] as number;
    const mean = Math.fround(sum / width);
    let squares = 0;
    for (let d = 0; d < width; d++) {
      const c = Math.fround((x[row + d] as number) - mean);
      squares += c * c;
    }
    const inverse = 1 / Math.sqrt(Math.fround(squares / width) + NORM_EPSILON);
    for (let d = 0; d < width; d++) out[row + d] = (norm.scale[d] as number) * inverse * ((x[row + d] as number) - mean) + (norm.bias[d] as number);
  }
  return out;
}

/** Multi-head self-attention over the n tokens: qkv is each token's queries, keys and values side by side. */
function attention(qkv: Float32Array, n: number, width: number, heads: number, queryScale: number): Float32Array {
  const size = width / heads;
  const stride = 3 * width;
  const out = new Float32Array(n * width);
  const weights = new Float64Array(n);
  const query = new Float32Array(size);
  for (let h = 0; h < heads; h++) {
    const q0 = h * size;
    const k0 = width + q0;
    const v0 = 2 * width + q0;
    for (let i = 0; i < n; i++) {
      // The graph scales the queries (in float32) before the products.
      for (let d = 0; d < size; d++) query[d] = (qkv[i * stride + q0 + d] as number) * queryScale;
      let max = -Infinity;
      for (let j = 0; j < n; j++) {
        const key = j * stride + k0;
        let dot = 0;
        for (let d = 0; d < size; d++) dot += (query[d] as number) * (qkv[key + d] as number);
        weights[j] = dot;
        if (dot > max) max = dot;
      }
      let total = 0;
      for (let j = 0; j < n; j++) total += weights[j] = Math.exp((weights[j] as number) - max);
      const row = i * width + q0;
      for (let j = 0; j < n; j++) {
        const w = (weights[j] as number) / total;
        const value = j * stride + v0;
        for (let d = 0; d < size; d++) out[row + d] = (out[row + d] as number) + w * (qkv[value + d] as number);
      }
    }
  }
  return out;
}

function add(a: Float32Array, b: Float32Array): Float32Array {
  for (let i = 0; i < a.length; i++) a[i] = (a[i] as number) + (b[i] as number);
  return a;
}

