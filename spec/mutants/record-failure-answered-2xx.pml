/* Mutant: a failed completion of the handler's record is only reported, and the attempt goes on to
   complete the delivery key and answer 200, as it does when the delivery key's own completion fails.
   The service stops sending; the handler's record stays uncompleted. Spin must reject it. */
#define MUTANT_RECORD_FAILURE_ANSWERED_2XX
#include "../lease-protocol.pml"
