#!/usr/bin/env node
// Reference outputs from ONNX Runtime (CPU execution provider) for one model,
// one input shape and one seed, for hetsched's model tests.
//
// Writes into --out:
//   input_0.bin, output_<i>.bin  raw little-endian tensors (row-major)
//   reference.json               {model_sha256, ort_version, threads, seed, dist,
//                                 generator, inputs/outputs: [{name, dtype, shape, file}]}
// The input comes from the generator in common.js (kGenerator, also written
// into reference.json). Idempotent: when reference.json already describes the
// same model bytes, shape, seed, dist and ORT version, nothing is recomputed.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const common = require('./common');

const kUsage = `usage: make_reference.js --model M.onnx --shape 1x3x640x640 --out DIR
                         [--seed 1] [--dist page|ppocr|unit] [--threads 1] [--force]`;

function sha256(file) {
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

function sameReference(file, want) {
  if (!fs.existsSync(file)) return false;
  try {
    const have = JSON.parse(fs.readFileSync(file, 'utf8'));
    const keys = ['model_sha256', 'ort_version', 'threads', 'seed', 'dist', 'generator'];
    if (keys.some((k) => have[k] !== want[k])) return false;
    if (JSON.stringify(have.inputs[0].shape) !== JSON.stringify(want.shape)) return false;
    const dir = path.dirname(file);
    return [...have.inputs, ...have.outputs].every((t) => fs.existsSync(path.join(dir, t.file)));
  } catch {
    return false;
  }
}

async function main() {
  const args = common.parseArgs(process.argv.slice(2),
      { model: undefined, shape: undefined, out: undefined, seed: '1', dist: 'page', threads: '1', force: false },
      kUsage);
  const shape = common.parseShape(args.shape);
  const seed = Number(args.seed);
  const threads = Number(args.threads);
  const ort = common.loadOrt();
  const want = {
    model_sha256: sha256(args.model),
    ort_version: ort.env.versions.node,
    threads,
    seed,
    dist: args.dist,
    generator: common.kGenerator,
    shape,
  };
  const refFile = path.join(args.out, 'reference.json');
  if (!args.force && sameReference(refFile, want)) {
    console.log(refFile);
    return;
  }

  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  if (session.inputNames.length !== 1) {
    throw new Error(`${args.model}: ${session.inputNames.length} inputs; only single-input models are supported`);
  }
  const input = common.makeInput(shape, seed, args.dist);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', input, shape) };
  const results = await session.run(feeds);

  fs.mkdirSync(args.out, { recursive: true });
  common.writeBin(path.join(args.out, 'input_0.bin'), input);
  const outputs = session.outputNames.map((name, i) => {
    const t = results[name];
    const file = `output_${i}.bin`;
    common.writeBin(path.join(args.out, file), t.data);
    return { name, dtype: common.dtypeName(t.type), shape: t.dims.map(Number), file };
  });
  const ref = {
    model: path.resolve(args.model),
    model_sha256: want.model_sha256,
    ort_version: want.ort_version,
    execution_provider: 'cpu',
    threads,
    threads,
    seed,
    dist: args.dist,
    generator: common.kGenerator,
    inputs: [{ name: session.inputNames[0], dtype: 'f32', shape, file: 'input_0.bin' }],
    outputs,
  };
  // Written last, so an interrupted run never looks complete.
  fs.writeFileSync(refFile + '.part', JSON.stringify(ref, null, 2) + '\n');
  fs.renameSync(refFile + '.part', refFile);
  console.log(refFile);
}

main().catch(common.fail);
