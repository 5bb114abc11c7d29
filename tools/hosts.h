// The hosts of a job that spans nodes (mpigpurun --host / --hostfile) and where its ranks go:
// Open MPI's syntax ("h1:2,h2" and host files of "host", "host:N" or "host slots=N" lines) and its
// default placement (ranks fill the hosts in order, block-wise). Pure: no processes, no network.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {
namespace launcher {

struct HostSlots {
  std::string name;
  int slots = 1;
};

// "h1[:slots],h2[:slots],..." appended to `hosts`; a name already there gets the slots added
// (Open MPI: "--host a,a" is two slots on a). `limit`: the most slots in all (kMaxRanks).
Status ParseHostList(const std::string& text, int limit, std::vector<HostSlots>* hosts);

// A host file's text: one host a line ("host", "host:N" or "host slots=N"), '#' starts a
// comment, blank lines are skipped. `file` names it in messages.
Status ParseHostfile(const std::string& text, const std::string& file, int limit,
                     std::vector<HostSlots>* hosts);

// Reads and parses a host file; an unreadable one is an error naming it.
Status ReadHostfile(const std::string& path, int limit, std::vector<HostSlots>* hosts);

int TotalSlots(const std::vector<HostSlots>& hosts);

// Where each rank runs. Nodes are numbered in the order they first receive a rank; every entry
// for the launcher's own host (`is_local`: "localhost", its name, one of its addresses) is one
// node, so ranks there share memory whatever name each entry used.
struct Placement {
  std::vector<int> node_of;     // rank -> node
  std::vector<int> local_rank;  // rank -> its index among its node's ranks
  std::vector<int> local_size;  // node -> how many ranks it has
  std::vector<std::string> node_host;  // node -> the host name to start its ranks on
  std::vector<bool> node_local;        // node -> the launcher's own host
  int local_node = -1;                 // the launcher's node, -1 when it runs no rank

  int nodes() const { return static_cast<int>(node_host.size()); }
};

// Places `nranks` ranks (at most TotalSlots(hosts)) on `hosts`, host by host.
Placement PlaceRanks(const std::vector<HostSlots>& hosts, int nranks,
                     const std::function<bool(const std::string&)>& is_local);

}  // namespace launcher
}  // namespace mpigpu
