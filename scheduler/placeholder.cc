#include "scheduler/program_generated.h"
