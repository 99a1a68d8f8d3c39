#!/usr/bin/env node
// Times ONNX Runtime (CPU execution provider) on one model, for
// bench/ort_compare.sh: warm-up runs, then timed runs, each timed around
// session.run() alone (the input tensor is made once, outside the loop).
//
// Prints one JSON line: {"runtime":"ort","model":...,"threads":N,"runs":N,
//   "median_ms":..., "min_ms":..., "max_ms":...}
'use strict';

const path = require('path');
const common = require('./common');

const kUsage = `usage: bench.js --model M.onnx --shape 1x3x640x640 [--input input_0.bin | --seed 1 --dist page]
                [--threads 1] [--warmup 5] [--runs 20]`;

function median(sorted) {
  const m = sorted.length >> 1;
  return sorted.length % 2 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
}

async function main() {
  const args = common.parseArgs(process.argv.slice(2),
      { model: undefined, shape: undefined, input: '', seed: '1', dist: 'page', threads: '1', warmup: '5', runs: '20' },
      kUsage);
  const shape = common.parseShape(args.shape);
  const threads = Number(args.threads);
  const elements = shape.reduce((a, b) => a * b, 1);
  const data = args.input ? common.readF32(args.input, elements) : common.makeInput(shape, Number(args.seed), args.dist);

  const ort = common.loadOrt();
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', data, shape) };
  for (let i = 0; i < Number(args.warmup); ++i) await session.run(feeds);
  const times = [];
  for (let i = 0; i < Number(args.runs); ++i) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({
    runtime: 'ort',
    ort_version: ort.env.versions.node,
    model: path.basename(args.model),
    threads,
    runs: times.length,
    median_ms: Number(median(times).toFixed(3)),
    min_ms: Number(times[0].toFixed(3)),
    max_ms: Number(times[times.length - 1].toFixed(3)),
  }));
}

main().catch(common.fail);
