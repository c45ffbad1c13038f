// Moved to sim/core/child_index.h (the shared vocabulary, issue 22); this forwarding
// header keeps includes not yet updated (policies/) compiling.
#pragma once
#include "sim/core/child_index.h"
