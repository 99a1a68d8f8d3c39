// SharedGpuContextRegistry: the process-wide table through which independent
// delegates (and host applications) agree on one SharedGpuContext.
//
// A context is identified by the RFC's (token, group) pair, written as the key
// string "token:group" (the same string MemoryDomain::context_key holds). The
// token and group are deployment concerns: they come from the profile or the
// compile specs (gpu_shared_context_token, gpu_shared_group_id).
//
// Ownership: the registry holds strong references, so a registered context
// lives at least until it is unregistered or the registry is cleared; after
// that it lives on for as long as a delegate still holds its shared_ptr.
//
// Thread-safety: every method is thread-safe. Creating a context (the
// factory call) happens under a per-key lock only, so contexts for different
// keys are created in parallel, and concurrent lookup_or_create calls for one
// key create exactly one context. A factory must not resolve its own key.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "hetsched/status.h"
#include "shared_gpu/shared_gpu_context.h"

namespace hetsched {

// How a delegate obtains its context (the RFC's gpu_shared_context_mode).
// The profile's own enum maps onto this one; shared_gpu/ does not depend on it.
enum class ContextMode {
  kLookupOnly,      // use a registered context; kNotFound if there is none
  kLookupOrCreate,  // the first caller creates and registers it, later ones reuse it (default)
  kCreateOnly,      // create and register; kAlreadyExists if the key is taken
  kDisabled,        // a private context, never registered
};

// "lookup_only", "lookup_or_create", "create_only", "disabled".
std::string_view context_mode_name(ContextMode mode);
// Parses the names above; anything else is kInvalidArgument listing them.
Result<ContextMode> parse_context_mode(std::string_view text);

// "token:group", the registry key.
std::string make_context_key(std::string_view token, int64_t group);

// Which context a delegate wants, and how to get it.
struct ContextSpec {
  std::string token = "default";
  int64_t group = 0;
  ContextMode mode = ContextMode::kLookupOrCreate;

  std::string key() const { return make_context_key(token, group); }
};

// The outcome of SharedGpuContextRegistry::resolve.
struct ResolvedContext {
  std::shared_ptr<SharedGpuContext> context;
  bool created = false;  // made by this call's factory (always true for kDisabled)
  std::string key;
};

// Makes a context when resolve needs one (usually SharedGpuContext::create
// with the delegate's options, or borrow).
using ContextFactory = std::function<Result<std::shared_ptr<SharedGpuContext>>()>;

class SharedGpuContextRegistry {
 public:
  // The process-wide registry.
  static SharedGpuContextRegistry& get();

  // Finds or makes the context for `spec` according to spec.mode, calling
  // `create` at most once. Logs "[gpu] context 'key' (created|reused)".
  // Errors: kNotFound for lookup_only on a missing key (naming it);
  // kAlreadyExists for create_only on a taken key (the factory is not
  // called); the factory's own error (nothing is registered then).
  Result<ResolvedContext> resolve(const ContextSpec& spec, const ContextFactory& create);

  // Registers a context the caller made (typically a host application's
  // borrow()ed one) under `key`. kAlreadyExists when taken.
  Status register_context(const std::string& key, std::shared_ptr<SharedGpuContext> context);
  // The registered context for `key`, or null.
  std::shared_ptr<SharedGpuContext> lookup(const std::string& key) const;
  // Drops the registry's reference; true if there was one. Holders keep theirs.
  bool unregister(const std::string& key);
  // Keys with a registered context, sorted.
  std::vector<std::string> keys() const;
  // Drops every entry (tests and process teardown).
  void clear_for_testing();

 private:
  // One key's slot. `create_mutex` serialises creation for this key;
  // `value_mutex` guards `context` and is never held while taking another lock.
  struct Entry {
    std::mutex create_mutex;
    mutable std::mutex value_mutex;
    std::shared_ptr<SharedGpuContext> context;

    std::shared_ptr<SharedGpuContext> load() const;
    void store(std::shared_ptr<SharedGpuContext> value);
  };

  // The entry for `key`, made empty if absent. Takes mutex_ only.
  std::shared_ptr<Entry> entry(const std::string& key);
  std::shared_ptr<Entry> find_entry(const std::string& key) const;

  // Guards the map only; never held while creating a context or while
  // waiting on an entry's create_mutex.
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace hetsched
