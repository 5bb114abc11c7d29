// MPIGPU_COLL_CHECK (api_config.h): before a collective moves data, its ranks check that their
// arguments agree, as MPICH's collective error checking does, so that every rank fails where
// they do not, instead of some ranks succeeding, one failing and perhaps one waiting for ever.
//
// The check is derived from the schedule each rank built, not from the call's arguments: rank r
// tells each peer p how many messages, of how many bytes in all, of which sizes and basic types
// in order, it will send p (one round, all pairs), and each rank compares what it is told with
// what it will receive. A disagreeing root, count or type signature shows as such a difference,
// for every collective and every form (v, w, neighbourhood) alike. A second round shares each
// rank's verdict, so every rank stops, with the same outcome, before the collective moves data.
// A rank whose own arguments are refused returns at once and sends nothing, as without the
// check. Intracommunicators only (an intercommunicator's collectives are not checked).
#pragma once

#include "mpigpu_api/api_internal.h"

namespace mpigpu::api {

class CollSched;

// Whether MPIGPU_COLL_CHECK is on.
bool CollCheckOn();
// Puts the check's rounds in front of the built, not yet started schedule s.
void AddCollCheck(CollSched& s);
}  // namespace mpigpu::api
