#include "wiring/netmods_found.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "internode/net_config.h"
#include "internode/tcp/tcp_channel.h"

namespace mpigpu {
namespace {

std::vector<NetIf> Ipv4Interfaces() {
  std::vector<NetIf> out;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return out;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr, text,
                sizeof text);
    out.push_back({i->ifa_name, text, (i->ifa_flags & IFF_UP) != 0,
                   (i->ifa_flags & IFF_LOOPBACK) != 0});
  }
  ::freeifaddrs(list);
  return out;
}

std::string FirstLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

// Port states from sysfs ("4: ACTIVE" -> "ACTIVE"), ports 1..8 as present.
std::vector<std::string> Ports(const std::string& device) {
  std::vector<std::string> out;
  const std::string dir = "/sys/class/infiniband/" + device + "/ports/";
  for (int p = 1; p <= 8; ++p) {
    std::string state = FirstLine(dir + std::to_string(p) + "/state");
    if (state.empty()) continue;
    const size_t colon = state.find(": ");
    if (colon != std::string::npos) state = state.substr(colon + 2);
    const std::string layer = FirstLine(dir + std::to_string(p) + "/link_layer");
    out.push_back(std::to_string(p) + ": " + state + (layer.empty() ? "" : " " + layer));
  }
  return out;
}

// The device list through libibverbs' stable entry points (no header: the library is optional).
struct ibv_device;
using GetDeviceList = ibv_device** (*)(int*);
using FreeDeviceList = void (*)(ibv_device**);
using GetDeviceName = const char* (*)(ibv_device*);

void FindRdma(NetmodsFound* f) {
  void* lib = ::dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    f->ibverbs_error = std::string("libibverbs.so.1 cannot be loaded (") + (why ? why : "?") +
                       "; Debian: libibverbs1 ibverbs-providers)";
    return;
  }
  auto get = reinterpret_cast<GetDeviceList>(::dlsym(lib, "ibv_get_device_list"));
  auto free_list = reinterpret_cast<FreeDeviceList>(::dlsym(lib, "ibv_free_device_list"));
  auto name = reinterpret_cast<GetDeviceName>(::dlsym(lib, "ibv_get_device_name"));
  if (get == nullptr || free_list == nullptr || name == nullptr) {
    f->ibverbs_error = "libibverbs.so.1 lacks ibv_get_device_list";
    ::dlclose(lib);
    return;
  }
  int n = 0;
  errno = 0;
  ibv_device** list = get(&n);
  f->ibverbs_loaded = true;
  if (list == nullptr) {  // no RDMA support in the kernel (ENOSYS) is the usual reason
    f->ibverbs_note = std::string("ibv_get_device_list: ") + std::strerror(errno);
  } else {
    for (int i = 0; i < n; ++i) {
      const char* dev = name(list[i]);
      if (dev != nullptr) f->rdma.push_back({dev, Ports(dev)});
    }
    free_list(list);
  }
  // Not closed: providers loaded by the list may keep threads or handlers alive.
}

}  // namespace

NetmodsFound FindNetmods() {
  NetmodsFound f;
  f.interfaces = Ipv4Interfaces();
  f.net_if = GetNetConfig().net_if;
  if (!f.net_if.empty()) {
    in_addr a{};
    Status st = transport::TcpChannel::ListenAddress(f.net_if.c_str(), "", &a);
    char text[INET_ADDRSTRLEN] = "?";
    if (st.ok()) f.listen = ::inet_ntop(AF_INET, &a, text, sizeof text) ? text : "?";
    else f.net_if_error = st.message();
  }
  FindRdma(&f);
  return f;
}

std::string FormatNetmods(const NetmodsFound& f) {
  std::string t = "\nNetmods (peers on other hosts; MPIGPU_NETMOD chooses)\n";
  t += "  tcp      IPv4 interfaces:";
  if (f.interfaces.empty()) t += " none";
  for (const NetIf& i : f.interfaces)
    t += " " + i.name + " " + i.address + (i.loopback ? " (loopback)" : "") +
         (i.up ? "" : " (down)") + (&i == &f.interfaces.back() ? "" : ",");
  t += "\n";
  if (!f.net_if_error.empty()) {
    t += "         ! MPIGPU_NET_IF: " + f.net_if_error + " (a job across hosts fails)\n";
  } else if (!f.listen.empty()) {
    t += "           listens on " + f.listen + " (MPIGPU_NET_IF=" + f.net_if + ")\n";
  } else {
    t += "           listens on the address this host reaches the job's bootstrap from "
         "(MPIGPU_NET_IF unset)\n";
  }
  t += "  ibverbs  ";
  if (!f.ibverbs_loaded) {
    t += "none: " + f.ibverbs_error + "\n";
  } else if (f.rdma.empty()) {
    t += "none: no RDMA device" + (f.ibverbs_note.empty() ? "" : " (" + f.ibverbs_note + ")") +
         "\n";
  } else {
    t += "RDMA devices:";
    for (const RdmaDevice& d : f.rdma) {
      t += " " + d.name;
      if (!d.ports.empty()) {
        t += " (port";
        for (const std::string& p : d.ports) t += (&p == &d.ports.front() ? " " : ", ") + p;
        t += ")";
      }
      t += &d == &f.rdma.back() ? "" : ",";
    }
    t += "\n";
  }
  return t;
}

}  // namespace mpigpu
