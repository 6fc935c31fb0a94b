/* Mutant: complete and release act on a lease whatever token holds it, so a receiver paused past its
   leases gives back the keys another attempt took over from it, and a third claim runs the handler
   beside that attempt. Spin must reject it. */
#define MUTANT_FINISH_IGNORES_TOKEN
#include "../lease-protocol.pml"
