// The delegates a profile enables, made once and kept in policy order.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "delegates/registry.h"
#include "profile/profile.h"

namespace hetsched {

// The profile's settings for one delegate as key/value options
// (engine, threads, device, and the RFC's gpu_shared_* keys).
DelegateOptions delegate_options(const Profile& profile, const std::string& name);

class DelegateSet {
 public:
  // Makes every enabled delegate of `profile`, ordered by its partition policy.
  static Result<DelegateSet> create(const Profile& profile);

  // In policy order; not owned by the caller, valid while the set lives.
  const std::vector<Delegate*>& ordered() const { return ordered_; }
  // nullptr when the set has no delegate of that name.
  Delegate* find(std::string_view name) const;

 private:
  std::vector<std::unique_ptr<Delegate>> owned_;
  std::vector<Delegate*> ordered_;
};

}  // namespace hetsched
