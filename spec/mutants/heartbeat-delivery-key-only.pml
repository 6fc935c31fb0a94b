/* Mutant: the heartbeat extends only the delivery key, so the handler key and the ordering lock lapse
   under a handler that runs longer than leaseMs, and a second delivery of the resource runs
   concurrently. Spin must reject it. */
#define MUTANT_HEARTBEAT_DELIVERY_KEY_ONLY
#include "../lease-protocol.pml"
