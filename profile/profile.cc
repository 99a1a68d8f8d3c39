#include "profile/profile.h"

namespace hetsched {
// Placeholder until the YAML loader lands.
Result<Profile> load_profile(const std::string& path) { return unsupported("profiles not implemented: " + path); }
Result<Profile> parse_profile(const std::string& yaml_text, const std::string& source_name) {
  return unsupported("profiles not implemented: " + source_name);
}
Profile default_profile() {
  Profile p;
  p.delegates["cpu"].enabled = true;
  return p;
}
std::vector<std::string> Profile::enabled_delegates_in_order() const { return {"cpu"}; }
const std::vector<std::string>& known_delegate_names() {
  static const std::vector<std::string> names{"cpu", "vulkan", "vgf"};
  return names;
}
}  // namespace hetsched
