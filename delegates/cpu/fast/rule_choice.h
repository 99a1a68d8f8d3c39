// How an environment variable overrides one of the fast kernels' shape
// rules (winograd_rule.h, pointwise_rule.h, dense_conv_rule.h,
// HETSCHED_DEPTHWISE in conv_group.h, HETSCHED_CPU_ARENA in
// cpu_delegate.cc and HETSCHED_RNN_APART in recurrent.cc, where "on" is what they do unset): "off"
// keeps every such op on XNNPACK, "on" takes every one the kernel supports
// (tests and benchmarks), unset or anything else leaves it to the rule.
// Read on every call, so that a benchmark may switch it between sessions.
#pragma once

namespace hetsched::cpu::fast {

enum class RuleChoice { kRule, kOn, kOff };

RuleChoice rule_choice(const char* variable);

}  // namespace hetsched::cpu::fast
