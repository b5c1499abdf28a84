// Runs an ONNX model with ONNX Runtime (CPU) on a float32 .npy batch and
// writes each output as a float32 .npy file.
//
//   node run.mjs MODEL.onnx INPUT.npy OUT_PREFIX [--threads N] [--repeat R]
//
// writes OUT_PREFIX.<output name>.npy for every output of the model and
// prints one JSON line: the input and output names, the input's declared
// shape (a dynamic axis as its name), the output shapes, and the
// milliseconds of each of the R runs after a first, untimed one.
import { readFileSync, writeFileSync } from 'node:fs';
import * as ort from 'onnxruntime-node';

function readNpy(path) {
  const b = readFileSync(path);
  if (b.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = b[6];
  const headerLen = major === 1 ? b.readUInt16LE(8) : b.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = b.toString('latin1', start, start + headerLen);
  if (!/'descr':\s*'<f4'/.test(header) || !/'fortran_order':\s*False/.test(header)) {
    throw new Error(`${path}: want a little-endian float32 C-order array, header ${header}`);
  }
  const shape = header.match(/'shape':\s*\(([^)]*)\)/)[1].split(',').map(s => s.trim()).filter(s => s).map(Number);
  const n = shape.reduce((a, d) => a * d, 1);
  const offset = start + headerLen;
  if (b.length - offset !== 4 * n) throw new Error(`${path}: ${b.length - offset} data bytes for shape (${shape})`);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = b.readFloatLE(offset + 4 * i);
  return { shape, data };
}

function writeNpy(path, dims, data) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${dims.join(', ')}${dims.length === 1 ? ',' : ''}), }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  const body = Buffer.alloc(4 * data.length);
  for (let i = 0; i < data.length; i++) body.writeFloatLE(data[i], 4 * i);
  writeFileSync(path, Buffer.concat([head, Buffer.from(header, 'latin1'), body]));
}

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} ${args[i + 1]}: want a positive integer`);
  args.splice(i, 2);
  return v;
};
const threads = option('--threads', 0);
const repeat = option('--repeat', 0);
if (args.length !== 3) {
  console.error('usage: node run.mjs MODEL.onnx INPUT.npy OUT_PREFIX [--threads N] [--repeat R]');
  process.exit(2);
}
const [modelPath, inputPath, outPrefix] = args;
const opts = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' };
if (threads > 0) {
  opts.intraOpNumThreads = threads;
  opts.interOpNumThreads = 1;
}
const session = await ort.InferenceSession.create(modelPath, opts);
const input = readNpy(inputPath);
const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input.data, input.shape) };
let results = await session.run(feeds);
const ms = [];
for (let i = 0; i < repeat; i++) {
  const t0 = process.hrtime.bigint();
  results = await session.run(feeds);
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const outputs = {};
for (const name of session.outputNames) {
  const t = results[name];
  writeNpy(`${outPrefix}.${name}.npy`, t.dims, t.data);
  outputs[name] = t.dims;
}
const meta = session.inputMetadata?.[0];
console.log(JSON.stringify({
  inputs: session.inputNames,
  outputs: session.outputNames,
  input_shape: meta?.shape ?? null,
  output_shapes: outputs,
  ms,
}));
