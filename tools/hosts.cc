#include "tools/hosts.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace mpigpu {
namespace launcher {
namespace {

Status Bad(const std::string& msg) { return Status(Err::kInvalidArg, msg); }

// Host names reach the launch agent as one word of its command line: ssh would take a leading
// '-' for an option, and nothing else than a name (or user@name) belongs there.
bool ValidHostName(const std::string& name) {
  if (name.empty() || name[0] == '-') return false;
  for (char c : name) {
    bool ok = c == '.' || c == '-' || c == '_' || c == '@' || (c >= 'a' && c <= 'z') ||
              (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool ParseSlots(const std::string& text, int* out) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return false;
  *out = std::stoi(text);
  return *out >= 1;
}

// Adds one host with its slots (merging a repeated name); `where` prefixes every message.
Status AddHost(const std::string& name, const std::string& slots_text, bool has_slots,
               int limit, const std::string& where, std::vector<HostSlots>* hosts) {
  if (name.empty()) return Bad(where + "empty host name");
  if (!ValidHostName(name))
    return Bad(where + "bad host name '" + name + "' (letters, digits, '.', '-', '_', '@')");
  int slots = 1;
  if (has_slots && !ParseSlots(slots_text, &slots))
    return Bad(where + "bad slots '" + slots_text + "' for host '" + name +
               "': expected a whole number from 1");
  if (TotalSlots(*hosts) + static_cast<long>(slots) > limit)
    return Bad(where + "more than " + std::to_string(limit) + " slots in all");
  for (HostSlots& h : *hosts) {
    if (h.name == name) {
      h.slots += slots;
      return Status::Ok();
    }
  }
  hosts->push_back(HostSlots{name, slots});
  return Status::Ok();
}

}  // namespace

Status ParseHostList(const std::string& text, int limit, std::vector<HostSlots>* hosts) {
  const std::string where = "bad --host '" + text + "': ";
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const size_t colon = item.find(':');
    MPIGPU_RETURN_IF_ERROR(AddHost(item.substr(0, colon),
                                   colon == std::string::npos ? "" : item.substr(colon + 1),
                                   colon != std::string::npos, limit, where, hosts));
    if (comma == std::string::npos) return Status::Ok();
    start = comma + 1;
  }
}

Status ParseHostfile(const std::string& text, const std::string& file, int limit,
                     std::vector<HostSlots>* hosts) {
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string where = "host file " + file + " line " + std::to_string(number) + ": ";
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host, extra, more;
    if (!(words >> host)) continue;  // blank or a comment
    words >> extra;
    if (words >> more) return Bad(where + "expected 'host', 'host:N' or 'host slots=N'");
    std::string name = host, slots;
    bool has_slots = false;
    if (!extra.empty()) {
      if (extra.compare(0, 6, "slots=") != 0)
        return Bad(where + "unknown '" + extra + "' (expected slots=N)");
      slots = extra.substr(6);
      has_slots = true;
    } else if (size_t colon = host.find(':'); colon != std::string::npos) {
      name = host.substr(0, colon);
      slots = host.substr(colon + 1);
      has_slots = true;
    }
    MPIGPU_RETURN_IF_ERROR(AddHost(name, slots, has_slots, limit, where, hosts));
  }
  if (hosts->empty()) return Bad("host file " + file + " names no host");
  return Status::Ok();
}

Status ReadHostfile(const std::string& path, int limit, std::vector<HostSlots>* hosts) {
  std::ifstream f(path);
  if (!f) return Bad("cannot read host file '" + path + "': " + std::strerror(errno));
  std::stringstream text;
  text << f.rdbuf();
  return ParseHostfile(text.str(), path, limit, hosts);
}

int TotalSlots(const std::vector<HostSlots>& hosts) {
  int n = 0;
  for (const HostSlots& h : hosts) n += h.slots;
  return n;
}

Placement PlaceRanks(const std::vector<HostSlots>& hosts, int nranks,
                     const std::function<bool(const std::string&)>& is_local) {
  Placement p;
  size_t host = 0;
  int used = 0;  // of hosts[host]'s slots
  int node = -1;
  for (int r = 0; r < nranks && host < hosts.size(); ++r) {
    if (used == 0) {  // the first rank on this entry: which node is it?
      const bool local = is_local(hosts[host].name);
      node = -1;
      for (int n = 0; n < p.nodes(); ++n)
        if (local ? p.node_local[n] : (!p.node_local[n] && p.node_host[n] == hosts[host].name))
          node = n;
      if (node < 0) {
        node = p.nodes();
        p.node_host.push_back(hosts[host].name);
        p.node_local.push_back(local);
        p.local_size.push_back(0);
        if (local) p.local_node = node;
      }
    }
    p.node_of.push_back(node);
    p.local_rank.push_back(p.local_size[node]++);
    if (++used == hosts[host].slots) {
      ++host;
      used = 0;
    }
  }
  return p;
}

}  // namespace launcher
}  // namespace mpigpu
