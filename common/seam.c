/* seam.c - the test seams, empty unless a test fills them (seam.h). */
#include "common/seam.h"

struct rba_seams rba_seams;
