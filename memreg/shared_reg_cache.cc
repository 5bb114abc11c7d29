#include "memreg/shared_reg_cache.h"

#include "memreg/pin_cache_config.h"
#include "memreg/reg_cache_config.h"

namespace mpigpu::memreg {

RegCache& SharedRegCache() {
  // Seen entries are bounded with the registrations: twice the pin cache's entries.
  static RegCache* cache = new RegCache(
      true, GetRegCacheConfig().max_entries + 2 * GetPinCacheConfig().max_entries);
  return *cache;
}

}  // namespace mpigpu::memreg
