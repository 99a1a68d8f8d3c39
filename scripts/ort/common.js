// Shared by make_reference.js and bench.js: finding onnxruntime-node, the
// deterministic input generator, and raw tensor files.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');

// Where scripts/fetch-models.sh installs onnxruntime-node (npm install
// --ignore-scripts), unless HETSCHED_ORT_MODULES points elsewhere.
function ortModulesDir() {
  if (process.env.HETSCHED_ORT_MODULES) return process.env.HETSCHED_ORT_MODULES;
  const cache = process.env.HETSCHED_CACHE || path.join(os.homedir(), '.cache', 'hetsched');
  return path.join(cache, 'ort', 'node_modules');
}

function loadOrt() {
  const dir = ortModulesDir();
  try {
    return require(require.resolve('onnxruntime-node', { paths: [dir] }));
  } catch (e) {
    throw new Error(`failed to load onnxruntime-node from ${dir}: ${e.message} (run scripts/fetch-models.sh)`);
  }
}

// The input generators, written out so anyone can reproduce them. All draw
// from mulberry32 over a uint32 state that starts at `seed` (next() below);
// a draw z gives u = (z >>> 8) / 2^24, a float32-exact value in [0, 1).
//   "unit":  x = u per element, row-major         (an image scaled to [0, 1))
//   "ppocr": x = (u - 0.5) / 0.5 per element       (PP-OCR's normalisation, [-1, 1))
//   "page":  a synthetic text page per batch item, the same in every channel,
//            normalised like "ppocr": white (1.0) background; text lines of
//            height h = min(24, floor(H/2)) every 2h+2 rows, the first at row
//            floor((h+2)/2), while they fit; along a line, from column
//            20 + z%40, glyphs of width 8 + z%14 separated by 3 + z%4 columns
//            (plus 40 when z%15 == 0 after a glyph) while x < W-40; a glyph
//            is drawn when z%5 != 0, each of its pixels dark (0.1) when
//            z%4 != 0. Draws happen in exactly that order, row-major within a
//            glyph. Random noise makes PP-OCR's detector output ~0 everywhere,
//            which any wrong kernel would also match; a page gives it text to find.
const kGenerator = 'mulberry32(seed), u = (z >>> 8) / 2^24; unit: x = u; ppocr: x = (u - 0.5) / 0.5; ' +
                   'page: synthetic text page normalised (x - 0.5) / 0.5 (scripts/ort/common.js)';
const kDists = ['unit', 'ppocr', 'page'];

function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return (z ^ (z >>> 14)) >>> 0;
  };
}

function drawPage(next, H, W) {
  const img = new Float32Array(H * W).fill(1.0);
  const h = Math.min(24, Math.floor(H / 2));
  const pitch = 2 * h + 2;
  for (let y0 = Math.floor((h + 2) / 2); y0 + h <= H; y0 += pitch) {
    let x = 20 + (next() % 40);
    while (x < W - 40) {
      const cw = 8 + (next() % 14);
      if (next() % 5 !== 0) {
        for (let y = y0; y < y0 + h; ++y) {
          for (let xx = x; xx < x + cw; ++xx) {
            if (next() % 4 !== 0) img[y * W + xx] = 0.1;
          }
        }
      }
      x += cw + 3 + (next() % 4);
      if (next() % 15 === 0) x += 40;
    }
  }
  return img;
}

function makeInput(shape, seed, dist) {
  if (!kDists.includes(dist)) throw new Error(`unknown dist '${dist}' (accepted: ${kDists.join(', ')})`);
  const n = shape.reduce((a, b) => a * b, 1);
  const next = mulberry32(seed);
  const data = new Float32Array(n);
  if (dist === 'page') {
    if (shape.length !== 4) throw new Error(`dist 'page' needs an NCHW shape, got [${shape}]`);
    const [N, C, H, W] = shape;
    for (let b = 0; b < N; ++b) {
      const img = drawPage(next, H, W);
      for (let c = 0; c < C; ++c) {
        const base = (b * C + c) * H * W;
        for (let i = 0; i < H * W; ++i) data[base + i] = (img[i] - 0.5) / 0.5;
      }
    }
    return data;
  }
  for (let i = 0; i < n; ++i) {
    const u = (next() >>> 8) / 16777216;
    data[i] = dist === 'unit' ? u : (u - 0.5) / 0.5;
  }
  return data;
}

function parseShape(text) {
  const dims = text.split(/[x,]/).map(Number);
  if (dims.length === 0 || dims.some((d) => !Number.isInteger(d) || d <= 0)) {
    throw new Error(`bad shape '${text}' (expected e.g. 1x3x640x640)`);
  }
  return dims;
}

// ORT tensor type → hetsched's dtype names (graph/dtype.h).
const kDtypeNames = {
  float32: 'f32', int64: 'i64', int32: 'i32', bool: 'bool', uint8: 'u8', int8: 'i8', float16: 'f16',
};

function dtypeName(ortType) {
  const name = kDtypeNames[ortType];
  if (!name) throw new Error(`unsupported ORT tensor type '${ortType}'`);
  return name;
}

// Raw little-endian bytes of a typed array (x86 and arm64 hosts are little-endian).
function writeBin(file, typed) {
  fs.writeFileSync(file, Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength));
}

function readF32(file, expectedElements) {
  const buf = fs.readFileSync(file);
  if (buf.length !== expectedElements * 4) {
    throw new Error(`${file}: ${buf.length} bytes, expected ${expectedElements * 4} (f32)`);
  }
  const copy = new Float32Array(expectedElements);
  new Uint8Array(copy.buffer).set(buf);
  return copy;
}

// --key value / --flag arguments into an object; `spec` gives defaults and
// marks required keys with undefined.
function parseArgs(argv, spec, usage) {
  const args = { ...spec };
  for (let i = 0; i < argv.length; ++i) {
    const a = argv[i];
    if (a === '-h' || a === '--help') {
      console.log(usage);
      process.exit(0);
    }
    if (!a.startsWith('--')) throw new Error(`unexpected argument '${a}'\n${usage}`);
    const key = a.slice(2);
    if (!(key in spec)) throw new Error(`unknown option '${a}'\n${usage}`);
    if (typeof spec[key] === 'boolean') {
      args[key] = true;
    } else {
      if (i + 1 >= argv.length) throw new Error(`option '${a}' needs a value`);
      args[key] = argv[++i];
    }
  }
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined) throw new Error(`missing --${k}\n${usage}`);
  }
  return args;
}

function fail(e) {
  console.error(`${path.basename(process.argv[1])}: ${e.message}`);
  process.exit(1);
}

module.exports = {
  ortModulesDir, loadOrt, kGenerator, makeInput, parseShape, dtypeName, writeBin, readF32, parseArgs, fail,
};
