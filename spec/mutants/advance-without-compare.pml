/* Mutant: the version advance records its version whatever the record holds, so it can go backwards.
   A run paused past its leases advances to its old version after a newer delivery's, and a delivery
   between the two then runs and overwrites the newest state. Spin must reject it (with three versions
   of the resource: with two, nothing older is left to run). */
#define MUTANT_ADVANCE_WITHOUT_COMPARE
#include "../lease-protocol.pml"
