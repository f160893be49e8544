// The CDI specs this plugin writes, one a group (respond.cc), and their
// removal once no container has held the group for a while (specs.cc).
#ifndef CMG_K8S_SPECS_H
#define CMG_K8S_SPECS_H

#include <chrono>
#include <map>
#include <set>
#include <string>

namespace k8s {

// The spec's file in the CDI folder for a group.
std::string spec_path(const std::string &dir, const std::string &group);

class Specs {
public:
  using Clock = std::chrono::steady_clock;
  Specs(std::string dir, Clock::duration keep)
      : dir_(std::move(dir)), keep_(keep)
  {
  }
  // Given the groups that PodResources says containers hold now, removes
  // the specs of groups that none has held for `keep`, saying each; a
  // spec first seen now, as after a restart, is given `keep` from now.
  void collect(const std::set<std::string> &held, Clock::time_point now);

private:
  std::string dir_;
  Clock::duration keep_;
  std::map<std::string, Clock::time_point> seen_; // group -> last held
};

} // namespace k8s

#endif // CMG_K8S_SPECS_H
