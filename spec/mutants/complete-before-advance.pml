/* Mutant: the handler record is completed before the version advance. A failed advance (or a crash)
   between them leaves a completed handler with an unadvanced version, and an older delivery then
   overwrites the newer state. Spin must reject it. */
#define MUTANT_COMPLETE_BEFORE_ADVANCE
#include "../lease-protocol.pml"
