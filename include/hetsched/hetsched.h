// The public embedding API of hetsched.
//
//   hetsched::Profile profile = *hetsched::load_profile("configs/default.yaml");
//   auto session = hetsched::open_session("model.hsg", profile);
//   auto outputs = (*session)->run({input});
//
// Everything returns Status / Result; nothing throws.
#pragma once

#include "graph/builder.h"
#include "graph/graph.h"
#include "hetsched/status.h"
#include "hetsched/version.h"
#include "profile/profile.h"
#include "scheduler/model_loader.h"
#include "scheduler/pipeline.h"
#include "scheduler/program_file.h"
#include "scheduler/session.h"
