// PmixLib: the few libpmix functions the PMIx bootstrap calls, found at run time (dlopen of
// MPIGPU_PMIX_LIB, "libpmix.so.2" by default) so that no mpigpu binary needs libpmix to start:
// only a process that a PMIx launcher started loads it. Compiled against PMIx 4.2's pmix.h; the
// calls and structures used here (pmix_proc_t, pmix_value_t, pmix_info_t) are the PMIx
// standard's stable ABI, which libpmix.so.2 from PMIx 3 on keeps.
#pragma once

#include <pmix.h>

#include <string>

#include "memcopy/status.h"

namespace mpigpu::internode {

struct PmixLib {
  std::string path;     // the file dlopen found (dlinfo), or the name asked for
  std::string version;  // PMIx_Get_version()
  pmix_status_t (*Init)(pmix_proc_t*, pmix_info_t*, size_t);
  pmix_status_t (*Finalize)(const pmix_info_t*, size_t);
  pmix_status_t (*Get)(const pmix_proc_t*, const pmix_key_t, const pmix_info_t*, size_t,
                       pmix_value_t**);
  pmix_status_t (*Put)(pmix_scope_t, const pmix_key_t, pmix_value_t*);
  pmix_status_t (*Commit)();
  pmix_status_t (*FenceNb)(const pmix_proc_t*, size_t, const pmix_info_t*, size_t,
                           pmix_op_cbfunc_t, void*);
  pmix_status_t (*RegisterEventHandler)(pmix_status_t*, size_t, pmix_info_t*, size_t,
                                        pmix_notification_fn_t, pmix_hdlr_reg_cbfunc_t, void*);
  pmix_status_t (*QueryInfoNb)(pmix_query_t*, size_t, pmix_info_cbfunc_t, void*);
  void (*ValueDestruct)(pmix_value_t*);
  const char* (*ErrorString)(pmix_status_t);
  const char* (*GetVersion)();
  const char* (*ProcStateString)(pmix_proc_state_t);

  // The library, loaded on the first call (thread-safe); kSystem naming the library and
  // dlopen's reason when it cannot be loaded or lacks a function. The table lives as long as
  // the process (never dlclosed: PMIx's own threads may still run its code).
  static Status Load(const PmixLib** out);
  // A value PMIx_Get returned: its contents and the value itself.
  void Release(pmix_value_t* v) const;
  std::string Error(pmix_status_t rc) const;
};

// mpigpu-info's line: "libpmix 4.2.2 (/usr/lib/...)" or why it cannot be loaded. Loads it.
std::string DescribePmixLibrary();

}  // namespace mpigpu::internode
