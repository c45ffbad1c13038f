// Moved to sim/core/request.h (the shared vocabulary, issue 22); this forwarding
// header keeps includes not yet updated (policies/) compiling.
#pragma once
#include "sim/core/request.h"
