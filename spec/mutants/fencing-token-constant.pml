/* Mutant: every run of h hands the fenced resource the same token, not its claim count, so a run
   paused past its lease writes over the effect of the run that took the delivery over. Spin must
   reject it. */
#define MUTANT_FENCING_TOKEN_CONSTANT
#include "../lease-protocol.pml"
