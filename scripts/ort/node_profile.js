#!/usr/bin/env node
// Where ONNX Runtime's CPU time goes in one model: its own node profile
// (session option enableProfiling), each node's kernel time as the median
// over the timed runs, summed by op type and, with --group REGEX, by the
// first match of REGEX in the node's name (e.g. '/layer\d' for a
// torchvision ResNet's stages). Set beside `hetsched bench M --profile P
// --profile-ops --op-rows 60` to see which ops hetsched loses on
// (docs/models.md, "Dense convs on the fast GEMM").
//
//   node scripts/ort/node_profile.js --model resnet50.onnx --shape 1x3x224x224 [--threads 1] [--runs 20]
//                                    [--group '/layer\d'] [--top 12]
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const common = require('./common');

const kUsage = "usage: node_profile.js --model M.onnx --shape 1x3x224x224 [--threads 1] [--runs 20] [--group REGEX] [--top 12]";
const kWarmup = 3;

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  const args = common.parseArgs(process.argv.slice(2),
                                { model: undefined, shape: undefined, threads: '1', runs: '20', group: '', top: '12' },
                                kUsage);
  const ort = common.loadOrt();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort_profile_'));
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'], intraOpNumThreads: Number(args.threads), interOpNumThreads: 1,
    graphOptimizationLevel: 'all', enableProfiling: true, profileFilePrefix: path.join(dir, 'profile'),
  });
  const shape = common.parseShape(args.shape);
  const feeds = { [session.inputNames[0]]: new ort.Tensor('float32', common.makeInput(shape, 1, 'ppocr'), shape) };
  for (let i = 0; i < kWarmup + Number(args.runs); ++i) await session.run(feeds);
  session.endProfiling();
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f))[0];
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, { recursive: true });

  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').map((e) => e.dur / 1000);
  const byNode = new Map();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!byNode.has(name)) byNode.set(name, { op: e.args.op_name, times: [] });
    byNode.get(name).times.push(e.dur / 1000);
  }
  const nodes = [...byNode].map(([name, n]) => ({ name, op: n.op, ms: median(n.times.slice(kWarmup)) }));
  const total = nodes.reduce((s, n) => s + n.ms, 0);
  console.log(`ORT ${ort.env.versions.common}, ${args.model}, ${args.threads} thread(s): run median ` +
              `${median(runs.slice(kWarmup)).toFixed(3)} ms, node kernels ${total.toFixed(3)} ms`);
  const sum = (key) => {
    const m = new Map();
    for (const n of nodes) {
      const k = key(n);
      m.set(k, (m.get(k) || 0) + n.ms);
    }
    return [...m].sort((a, b) => b[1] - a[1]);
  };
  console.log('by op type:');
  for (const [op, ms] of sum((n) => n.op)) console.log(`  ${op.padEnd(24)} ${ms.toFixed(3)} ms`);
  if (args.group) {
    const re = new RegExp(args.group);
    console.log(`by ${args.group}:`);
    for (const [g, ms] of sum((n) => (n.name.match(re) || ['other'])[0])) console.log(`  ${g.padEnd(24)} ${ms.toFixed(3)} ms`);
  }
  console.log('slowest nodes:');
  for (const n of nodes.sort((a, b) => b.ms - a.ms).slice(0, Number(args.top)))
    console.log(`  ${n.ms.toFixed(3)} ms  ${n.op.padEnd(12)} ${n.name}`);
}

main().catch(common.fail);
