// Program ⇄ bytes ⇄ file (FlatBuffers, schema scheduler/program.fbs,
// identifier "HSPG", extension ".hsp").
//
// Loading checks, in this order, and stops at the first failure with one line
// naming the source (the path, or `source_name`):
//   missing or unreadable file   kNotFound / kUnavailable
//     "failed to read program file 'x': No such file or directory"
//   too small or wrong identifier   kDataLoss
//     "'x' is not a hetsched program file (expected identifier HSPG)"
//   newer format version   kUnsupported (read from the root table's first
//   field before the rest is trusted, so a newer writer's additions cannot
//   turn this into "corrupt")
//     "program file 'x' has format version 2; this hetsched reads version 1 — rebuild it with `hetsched compile`"
//   FlatBuffers verifier failure   kDataLoss
//     "failed to load program file 'x': truncated or corrupt (FlatBuffers verification failed)"
//   unknown enum values, constant data of the wrong size, validate_program()
//   failures   kDataLoss
//     "failed to load program file 'x': step 3 runs island 7, but the program has 2 islands"
// No input, however corrupt, crashes the loader.
//
// A file holds one program or several shape variants of one model (the same
// model compiled for other input shapes; scheduler/shape_variants.h): the
// first is the root table, the others its `variants`. The one-program
// readers refuse a file of several (kInvalidArgument naming them).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hetsched/status.h"
#include "scheduler/program.h"

namespace hetsched {

// Serializes `program` as it is, format_version included (it is not checked,
// so tests can write files "from the future"). Bounded by FlatBuffers' 2 GiB
// buffer limit: a larger program aborts in the builder.
Blob serialize_program(const Program& program);

// Loads a program from `bytes` (not retained; any address). `source_name`
// stands for the file in messages.
Result<Program> deserialize_program(std::span<const uint8_t> bytes, const std::string& source_name = "<memory>");

// Writes `program` to `path` through a temporary file renamed into place, so
// a reader never sees half a file. Errors: "failed to write program file 'x': <reason>".
Status write_program_file(const Program& program, const std::string& path);

// Reads and loads the file at `path`; errors as listed above.
Result<Program> read_program_file(const std::string& path);

// The same for shape variants: every variant of the file, in order (one for
// a file of one program). Writing checks check_shape_variants() first;
// serializing an empty list gives an empty blob.
Blob serialize_program_variants(std::span<const Program> variants);
Result<std::vector<Program>> deserialize_program_variants(std::span<const uint8_t> bytes,
                                                          const std::string& source_name = "<memory>");
Status write_program_variants_file(std::span<const Program> variants, const std::string& path);
Result<std::vector<Program>> read_program_variants_file(const std::string& path);

}  // namespace hetsched
