// The configuration page (docs/configuration.md) written from the settings registry, so the page
// and the settings cannot drift apart (docs:configuration_page_test compares them).
#pragma once

#include <string>

namespace mpigpu {

// Every registered MPIGPU_* setting by component: name, default, allowed values, meaning; then
// the MPIGPU_* names the launchers set. Independent of the environment and of the build mode.
std::string ConfigMarkdown();

}  // namespace mpigpu
