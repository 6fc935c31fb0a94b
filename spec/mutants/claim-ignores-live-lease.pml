/* Mutant: claim takes a key even while another token's lease on it is live, so two attempts of one
   delivery run its handler at once. Spin must reject it. */
#define MUTANT_CLAIM_IGNORES_LIVE_LEASE
#include "../lease-protocol.pml"
