#!/usr/bin/env node
// ONNX Runtime's output for one model at each graph optimisation level
// (disabled, basic, extended, all), and how far each level and, optionally,
// another runtime's output (hetsched's `run -o`) are from one another:
// max |a - b| / max |disabled|. docs/models.md ("Models on the GPU
// delegates") used it to find where ORT's fp16 PP-OCRv4 det parts from an
// f32 computation of the same fp16 model (at the basic level).
//
//   node scripts/ort/opt_levels.js --model det_fp16.onnx --shape 1x3x640x640 [--dist page] [--half]
//                                  [--write-input in.bin] [--other hetsched_out.bin]
//
// The input is common.js's generator (seed 1); --half feeds it as f16
// (rounded to nearest even) and reads f16 outputs, as an fp16 model wants.
// --write-input saves the input as fed, for the other runtime:
//   hetsched run det_fp16.onnx --input-shape x=1x3x640x640 -i x=in.bin -o out.bin
'use strict';

const fs = require('fs');
const common = require('./common');

const kUsage = 'usage: opt_levels.js --model M.onnx --shape 1x3x640x640 [--dist page|ppocr|unit] [--half] ' +
               '[--write-input IN.bin] [--other OUT.bin]';
const kLevels = ['disabled', 'basic', 'extended', 'all'];

// f32 -> f16 bits, round to nearest even (graph/dtype.h's rounding).
function toHalf(values) {
  const f = new Float32Array(1);
  const u = new Uint32Array(f.buffer);
  const out = new Uint16Array(values.length);
  for (let i = 0; i < values.length; ++i) {
    f[0] = values[i];
    const x = u[0];
    const sign = (x >>> 16) & 0x8000;
    const exp = (x >>> 23) & 0xff;
    let mant = x & 0x7fffff;
    if (exp === 0xff) { out[i] = sign | 0x7c00 | (mant ? 0x200 : 0); continue; }
    let e = exp - 127 + 15;
    if (e >= 31) { out[i] = sign | 0x7c00; continue; }
    if (e <= 0) {
      if (e < -10) { out[i] = sign; continue; }
      mant |= 0x800000;
      const shift = 14 - e;
      let h = mant >>> shift;
      const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
      if (rem > half || (rem === half && (h & 1))) h += 1;
      out[i] = sign | h;
      continue;
    }
    let h = (e << 10) | (mant >>> 13);
    const rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h += 1;
    out[i] = sign | h;
  }
  return out;
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1, exp = (h >>> 10) & 0x1f, mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

function asFloats(data) {
  return data instanceof Uint16Array ? Float32Array.from(data, halfToFloat) : Float32Array.from(data);
}

function relError(a, b, scale) {
  let worst = 0;
  for (let i = 0; i < a.length; ++i) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return worst / scale;
}

async function main() {
  const args = common.parseArgs(process.argv.slice(2),
                                { model: undefined, shape: undefined, dist: 'page', half: false, other: '', 'write-input': '' }, kUsage);
  const ort = common.loadOrt();
  const shape = common.parseShape(args.shape);
  const x = common.makeInput(shape, 1, args.dist);
  const data = args.half ? toHalf(x) : x;
  if (args['write-input']) common.writeBin(args['write-input'], data);
  const input = new ort.Tensor(args.half ? 'float16' : 'float32', data, shape);
  const outputs = {};
  for (const level of kLevels) {
    const session = await ort.InferenceSession.create(args.model, {
      executionProviders: ['cpu'], intraOpNumThreads: 1, interOpNumThreads: 1, graphOptimizationLevel: level,
    });
    const result = await session.run({ [session.inputNames[0]]: input });
    outputs[level] = asFloats(result[session.outputNames[0]].data);
  }
  if (args.other) {
    const buf = fs.readFileSync(args.other);
    const raw = args.half ? new Uint16Array(buf.buffer, buf.byteOffset, buf.length / 2)
                          : new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
    outputs.other = asFloats(raw);
  }
  const scale = outputs.disabled.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  console.log(`ORT ${ort.env.versions.common}, ${args.model}, max |output| ${scale}`);
  const names = Object.keys(outputs);
  for (const a of names) {
    console.log(`${a.padEnd(9)} ` + names.map((b) => `${b} ${relError(outputs[a], outputs[b], scale).toExponential(1)}`).join('  '));
  }
}

main().catch(common.fail);
