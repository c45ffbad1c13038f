// Moved to sim/core/time.h (the shared vocabulary, issue 22); this forwarding
// header keeps includes not yet updated (policies/) compiling.
#pragma once
#include "sim/core/time.h"
