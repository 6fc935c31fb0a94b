/* Mutant: the ordering guard reads the version and runs the handler whatever it read, so a delivery
   older than one already handled overwrites the newer state. Spin must reject it. */
#define MUTANT_STALE_CHECK_SKIPPED
#include "../lease-protocol.pml"
