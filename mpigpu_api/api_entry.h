// What the files that define the API's extern "C" entry points (api_env.cc, api_p2p.cc,
// api_completion.cc) share: the names their Do* functions use from mpigpu::api, at global scope
// next to the entry points, and WORLD's handle. Included by those .cc files only.
#pragma once

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"

using mpigpu::SetLastError;
using mpigpu::api::ApiRequest;
using mpigpu::api::CheckActive;
using mpigpu::api::CommPtr;
using mpigpu::api::Finish;
using mpigpu::api::FinishWith;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::State;
using mpigpu::api::TypedBuf;

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
