/* Mutant: a failed version advance is not tried again, and the lock is released at once. The call,
   timed out, lands later: an older delivery takes the released lock and writes its state first, the
   late advance then records the newer version, and the newer delivery's retry skips itself as stale
   over the older state. Spin must reject it. */
#define MUTANT_RELEASE_AFTER_FAILED_ADVANCE
#include "../lease-protocol.pml"
