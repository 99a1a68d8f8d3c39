#include "shared_gpu/shared_gpu_registry.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace hetsched {
namespace {

constexpr ContextMode kAllModes[] = {ContextMode::kLookupOnly, ContextMode::kLookupOrCreate,
                                     ContextMode::kCreateOnly, ContextMode::kDisabled};

// Runs the factory and insists on a context.
Result<std::shared_ptr<SharedGpuContext>> run_factory(const ContextFactory& create, const std::string& key) {
  const std::string prefix = "failed to create shared GPU context '" + key + "': ";
  if (!create) return invalid_argument(prefix + "no factory given");
  Result<std::shared_ptr<SharedGpuContext>> made = create();
  if (!made.is_ok()) return made.status().with_context(prefix);
  if (*made == nullptr) return internal_error(prefix + "the factory returned no context");
  return made;
}

}  // namespace

std::string_view context_mode_name(ContextMode mode) {
  switch (mode) {
    case ContextMode::kLookupOnly:
      return "lookup_only";
    case ContextMode::kLookupOrCreate:
      return "lookup_or_create";
    case ContextMode::kCreateOnly:
      return "create_only";
    case ContextMode::kDisabled:
      return "disabled";
  }
  return "?";
}

Result<ContextMode> parse_context_mode(std::string_view text) {
  for (ContextMode mode : kAllModes) {
    if (text == context_mode_name(mode)) return mode;
  }
  return invalid_argument("failed to parse context mode '" + std::string(text) +
                          "': expected one of lookup_only, lookup_or_create, create_only, disabled");
}

std::string make_context_key(std::string_view token, int64_t group) {
  return std::string(token) + ":" + std::to_string(group);
}

std::shared_ptr<SharedGpuContext> SharedGpuContextRegistry::Entry::load() const {
  std::lock_guard lock(value_mutex);
  return context;
}

void SharedGpuContextRegistry::Entry::store(std::shared_ptr<SharedGpuContext> value) {
  std::lock_guard lock(value_mutex);
  context = std::move(value);
}

SharedGpuContextRegistry& SharedGpuContextRegistry::get() {
  // Never destroyed: delegates torn down during static destruction may still
  // reach for it, and contexts must not be destroyed after the Vulkan loader
  // has been unloaded at exit.
  static auto* registry = new SharedGpuContextRegistry();
  return *registry;
}

std::shared_ptr<SharedGpuContextRegistry::Entry> SharedGpuContextRegistry::entry(const std::string& key) {
  std::lock_guard lock(mutex_);
  std::shared_ptr<Entry>& slot = entries_[key];
  if (slot == nullptr) slot = std::make_shared<Entry>();
  return slot;
}

std::shared_ptr<SharedGpuContextRegistry::Entry> SharedGpuContextRegistry::find_entry(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : it->second;
}

Result<ResolvedContext> SharedGpuContextRegistry::resolve(const ContextSpec& spec, const ContextFactory& create) {
  const std::string key = spec.key();
  const std::string_view mode = context_mode_name(spec.mode);

  if (spec.mode == ContextMode::kDisabled) {
    HS_ASSIGN_OR_RETURN(std::shared_ptr<SharedGpuContext> context, run_factory(create, key));
    spdlog::info("[gpu] context '{}' (created, private: mode disabled)", key);
    return ResolvedContext{std::move(context), true, key};
  }

  if (spec.mode == ContextMode::kLookupOnly) {
    std::shared_ptr<Entry> slot = find_entry(key);
    std::shared_ptr<SharedGpuContext> context;
    if (slot != nullptr) {
      // A creation in progress for this key finishes before we look.
      std::lock_guard creating(slot->create_mutex);
      context = slot->load();
    }
    if (context == nullptr) {
      return not_found("failed to find shared GPU context '" + key + "': none is registered (mode lookup_only)");
    }
    spdlog::info("[gpu] context '{}' (reused)", key);
    return ResolvedContext{std::move(context), false, key};
  }

  std::shared_ptr<Entry> slot = entry(key);
  std::lock_guard creating(slot->create_mutex);
  std::shared_ptr<SharedGpuContext> existing = slot->load();
  if (existing != nullptr && !existing->lost().is_ok()) {
    // A lost device runs nothing more: the sessions on it keep refusing, and
    // new ones get a fresh device under the same key.
    spdlog::warn("[gpu] context '{}' lost its device ({}); making a new one", key, existing->lost().message());
    existing = nullptr;
  }
  if (existing != nullptr) {
    if (spec.mode == ContextMode::kCreateOnly) {
      return already_exists("failed to create shared GPU context '" + key +
                            "': the key is already registered (mode create_only)");
    }
    spdlog::info("[gpu] context '{}' (reused)", key);
    return ResolvedContext{std::move(existing), false, key};
  }
  HS_ASSIGN_OR_RETURN(std::shared_ptr<SharedGpuContext> context, run_factory(create, key));
  slot->store(context);
  spdlog::info("[gpu] context '{}' (created, mode {})", key, mode);
  return ResolvedContext{std::move(context), true, key};
}

Status SharedGpuContextRegistry::register_context(const std::string& key, std::shared_ptr<SharedGpuContext> context) {
  if (context == nullptr) {
    return invalid_argument("failed to register shared GPU context '" + key + "': no context given");
  }
  std::shared_ptr<Entry> slot = entry(key);
  std::lock_guard creating(slot->create_mutex);
  if (slot->load() != nullptr) {
    return already_exists("failed to register shared GPU context '" + key + "': the key is already registered");
  }
  slot->store(std::move(context));
  spdlog::info("[gpu] context '{}' (registered by the host)", key);
  return Status::ok();
}

std::shared_ptr<SharedGpuContext> SharedGpuContextRegistry::lookup(const std::string& key) const {
  std::shared_ptr<Entry> slot = find_entry(key);
  return slot == nullptr ? nullptr : slot->load();
}

bool SharedGpuContextRegistry::unregister(const std::string& key) {
  std::shared_ptr<Entry> slot;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    slot = std::move(it->second);
    entries_.erase(it);
  }
  // The context (if this was its last reference) is destroyed here, outside
  // the registry lock: destruction waits for the GPU.
  return slot->load() != nullptr;
}

std::vector<std::string> SharedGpuContextRegistry::keys() const {
  std::map<std::string, std::shared_ptr<Entry>> snapshot;
  {
    std::lock_guard lock(mutex_);
    snapshot = entries_;
  }
  std::vector<std::string> out;
  for (const auto& [key, slot] : snapshot) {
    if (slot->load() != nullptr) out.push_back(key);
  }
  return out;
}

void SharedGpuContextRegistry::clear_for_testing() {
  std::map<std::string, std::shared_ptr<Entry>> dropped;
  {
    std::lock_guard lock(mutex_);
    dropped.swap(entries_);
  }
  // Contexts whose last reference was here are destroyed as `dropped` goes
  // out of scope, outside the registry lock.
}

}  // namespace hetsched
