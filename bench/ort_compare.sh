#!/usr/bin/env bash
# hetsched's CPU delegate (engine xnnpack) against ONNX Runtime 1.30.0 (CPU
# execution provider), same model, same input, same thread count, in one
# run: for each model and thread count, model_bench and scripts/ort/bench.js
# are run alternately (rounds of each, so a busy machine slows both alike),
# and the table gives the median of their medians and the ratio
# hetsched / ORT (the issue's target: <= 0.9).
#
# usage: bench/ort_compare.sh [--build DIR] [--threads "1 2"] [--runs N] [--warmup N]
#                             [--rounds N] [--engine xnnpack|portable] [--bench PATH]
#                             [--model NAME=M.onnx:1x64x128 ...] [--list FILE ...] [--ppocr]
#                             [--no-per-op]
# Models: the PP-OCR det and cls models (the default, or --ppocr beside
# --model or --list), each --model (a name for the table, the file, the
# first input's shape) and each line of a --list file (NAME=M.onnx:SHAPE as
# for --model; a relative M.onnx is taken from the list file's folder, '#'
# starts a comment, and a line whose file is missing is skipped with a note,
# so one list can name models that only some machines have;
# bench/models/transformers.list is docs/models.md's transformer table).
# Beside the medians the table gives each side's fastest run (median over
# the rounds) and their ratio: on a machine other jobs share, the median
# measures the neighbours too. Needs model_bench built (configure with
# -DHETSCHED_BUILD_BENCH=ON, then `ninja -C DIR model_bench`; --bench names
# another build of it, e.g. a baseline's), and fetches the PP-OCR models and
# onnxruntime-node through scripts/ort/setup_models.sh. Inputs: PP-OCR's
# references' input_0.bin (a synthetic text page, scripts/ort/common.js); for
# a --model, the input_0.bin that scripts/ort/make_reference.js writes for it
# under DIR/models/ort_compare/NAME (uniform in [-1, 1), seed 1).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build"
threads_list="1 2"
runs=10
warmup=3
rounds=3
engine=xnnpack
bench=""
extra=()      # NAME=FILE:SHAPE from --model and --list
ppocr=""
per_op=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --threads) threads_list="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --engine) engine="$2"; shift 2 ;;
    --bench) bench="$2"; shift 2 ;;
    --model) extra+=("$2"); shift 2 ;;
    --list)
      [ -f "$2" ] || { echo "ort_compare: list file '$2' not found" >&2; exit 2; }
      list_dir="$(cd "$(dirname "$2")" && pwd)"
      while IFS= read -r line || [ -n "$line" ]; do
        line="${line%%#*}"; line="$(echo "$line" | xargs)"
        [ -n "$line" ] || continue
        case "$line" in *=*:*) ;; *) echo "ort_compare: $2: '$line' is not NAME=FILE:SHAPE" >&2; exit 2 ;; esac
        name="${line%%=*}"; rest="${line#*=}"; file="${rest%:*}"
        case "$file" in /*) ;; *) file="$list_dir/$file" ;; esac
        if [ ! -f "$file" ]; then echo "# ort_compare: skipping $name: $file not found" >&2; continue; fi
        extra+=("$name=$file:${rest##*:}")
      done <"$2"
      shift 2 ;;
    --ppocr) ppocr=1; shift ;;
    --no-per-op) per_op=""; shift ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "ort_compare: unknown option '$1'" >&2; exit 2 ;;
  esac
done

[ ${#extra[@]} -eq 0 ] && ppocr=1
bench="${bench:-$build/bench/model_bench}"
if [ ! -x "$bench" ]; then
  echo "ort_compare: $bench not found; build it: cmake -S $root -B $build -DHETSCHED_BUILD_BENCH=ON && ninja -C $build model_bench" >&2
  exit 2
fi

manifest="$build/models/manifest.txt"
"$root/scripts/ort/setup_models.sh" "$manifest" >/dev/null
if ! grep -q '^status=ready' "$manifest"; then
  echo "ort_compare: models unavailable: $(sed -n 's/^reason=//p' "$manifest")" >&2
  exit 2
fi
value() { sed -n "s/^$1=//p" "$manifest"; }

json_field() {  # json_field NAME < line: the first NAME (model_bench's steps repeat median_ms)
  grep -o "\"$1\":[0-9.e+-]*" | head -1 | cut -d: -f2
}

input_shape() {  # input_shape reference.json → 1x3x640x640
  sed -n '/"inputs"/,/"file"/p' "$1" | tr -d ' \n' | sed 's/.*"shape":\[\([0-9,]*\)\].*/\1/' | tr , x
}

median() {  # median of the arguments
  printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'
}

echo "# hetsched $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') engine=$engine vs ONNX Runtime (CPU EP)"
echo "# host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# per measurement: $warmup warm-up + $runs timed runs, median and min; $rounds alternating rounds, median of those"
# The models as "key model shape input" lines.
models=()
if [ -n "$ppocr" ]; then
  for key in det cls; do
    ref_dir="$(dirname "$(value "${key}_reference")")"
    models+=("$key $(value "${key}_model") $(input_shape "$ref_dir/reference.json") $ref_dir/input_0.bin")
  done
fi
for spec in "${extra[@]}"; do
  key="${spec%%=*}"; rest="${spec#*=}"; model="${rest%:*}"; shape="${rest##*:}"
  out_dir="$build/models/ort_compare/$key"
  HETSCHED_ORT_MODULES="$(value ort_modules)" node "$root/scripts/ort/make_reference.js" --model "$model" \
    --shape "$shape" --out "$out_dir" --dist ppocr >/dev/null
  models+=("$key $model $shape $out_dir/input_0.bin")
done

rows=()
details=()
for entry in "${models[@]}"; do
  read -r key model shape input <<<"$entry"
  for t in $threads_list; do
    hs=(); ort=(); hs_min=(); ort_min=()
    for ((r = 0; r < rounds; ++r)); do
      out="$("$bench" --model "$model" --shape "$shape" --input "$input" --threads "$t" --engine "$engine" \
              --warmup "$warmup" --runs "$runs")"
      line="$(grep '^json: ' <<<"$out")"
      hs+=("$(json_field median_ms <<<"$line")")
      hs_min+=("$(json_field min_ms <<<"$line")")
      ort_line="$(HETSCHED_ORT_MODULES="$(value ort_modules)" \
                  node "$root/scripts/ort/bench.js" --model "$model" --shape "$shape" --input "$input" \
                  --threads "$t" --warmup "$warmup" --runs "$runs")"
      ort+=("$(json_field median_ms <<<"$ort_line")")
      ort_min+=("$(json_field min_ms <<<"$ort_line")")
    done
    hs_ms="$(median "${hs[@]}")"
    ort_ms="$(median "${ort[@]}")"
    hs_min_ms="$(median "${hs_min[@]}")"
    ort_min_ms="$(median "${ort_min[@]}")"
    rows+=("$(printf '%-12s %-14s %7s %12.3f %12.3f %8.2f %12.3f %12.3f %8.2f' "$key" "$shape" "$t" "$hs_ms" "$ort_ms" \
              "$(awk -v a="$hs_ms" -v b="$ort_ms" 'BEGIN {print a / b}')" "$hs_min_ms" "$ort_min_ms" \
              "$(awk -v a="$hs_min_ms" -v b="$ort_min_ms" 'BEGIN {print a / b}')")")
    details+=("$key threads=$t: hetsched rounds ${hs[*]} ms; ORT rounds ${ort[*]} ms")
    details+=("$(grep -E '^  (step|cpu island)' <<<"$out" | sed "s/^/  $key threads=$t (last round) /")")
  done
done

echo
printf '%-12s %-14s %7s %12s %12s %8s %12s %12s %8s\n' model input threads hetsched_ms ort_ms ratio \
  hetsched_min ort_min ratio
printf '%s\n' "${rows[@]}"
echo
echo "# rounds and hetsched's per-step breakdown (RunStats: one step per island and handoff)"
printf '%s\n' "${details[@]}"

# model_bench --per-op times each node alone (hetsched bench --profile-ops
# times each piece inside the model).
[ -n "$per_op" ] || exit 0
first_threads="${threads_list%% *}"
for entry in "${models[@]}"; do
  read -r key model shape input <<<"$entry"
  echo
  echo "# $key: per-op estimate at threads=$first_threads (model_bench --per-op 3)"
  "$bench" --model "$model" --shape "$shape" --input "$input" --threads "$first_threads" \
    --engine "$engine" --warmup 1 --runs 3 --per-op 3 | sed -n '/per op, each node alone/,$p'
done
