/*
 * hookline's lease protocol, model-checked: the idempotency store (leases, completions, the version
 * compare-and-set) and the receiver's path through a guarded handler: the ordering guard
 * `order: { key, version }` with `completion: 'handler'` (a record per handler), or with
 * `completion: 'delivery'` (-DCOMPLETION_DELIVERY: the delivery key is the only record).
 * docs/ARCHITECTURE.md ("What is proven, and how") says what this proves and what it leaves out;
 * test/model/lease-protocol.test.ts (`pnpm test:model`) runs it. Each step below names the code it
 * follows (packages/core/src/steps/).
 *
 * BOUNDS (#defines below; `spin -D` overrides each):
 *   receivers   NRECV    = 2  processes taking deliveries from the service concurrently (at most 3)
 *   deliveries  NDEL     = 2  of one resource, versions 1..NDEL (2 or 3); one guarded handler h
 *   resources   NRES     = 1  one ordering lock, one version record, one state that h writes
 *   sends       SENDS    = 3  copies the service sends in all: first attempts, retries, duplicates and
 *                             replays alike, of any delivery, at any time, in any order
 *   crashes     CRASHES  = 1  a receiver crashes before any of its steps: the attempt is gone, its
 *                             leases stay until they lapse
 *   pauses      PAUSES   = 1  a receiver stops renewing its leases before any of its steps (a pause,
 *                             or a handler past maxRunMs) and goes on: they may lapse meanwhile
 *   failures    FAILURES = 1  a store call fails (a failed claim, complete or release may still have
 *                             taken effect; a failed version advance may land at any later time), or
 *                             the handler throws after its write, or another handler of the delivery
 *                             fails; at most 4. The receiver tries a failed advance once more: both
 *                             tries fail only with FAILURES >= 2
 * The test searches these bounds, and others (its table in docs/ARCHITECTURE.md).
 * With -DLIVENESS (the claim `handled`) the service sends each delivery once and retries it until it is
 * answered 2xx, at most BUDGET = 4 attempts in all, a retry only once no attempt is in progress anywhere
 * (the service's retries are spaced wider than leaseMs and maxRunMs, so by then every lease that nobody
 * renews has lapsed); SENDS does not apply, and pan checks the claim under weak fairness.
 *
 * TIME is abstract. A lease lapses only when nobody renews it: its token belongs to no running attempt
 * (the attempt crashed, or ended without giving the key back, or left the lock to lapse after both
 * tries of its version advance failed), or its holder is paused or past maxRunMs, or (the heartbeat
 * mutant) the heartbeat does not cover it. A claim that meets such a lease may find it lapsed (and take
 * it over) or not yet (in_progress). A live receiver's leases never lapse between its store calls:
 * each call ends within storeTimeoutMs, the heartbeat renews every lease the attempt holds every
 * leaseMs / 3 while its handlers run, and createReceiver refuses a storeTimeoutMs for which
 * 2 * storeTimeoutMs + leaseMs / 3 >= leaseMs (resolve-options.ts: a lease taken by a call that
 * answers only at its time limit must still be live when the first renewal after it lands). Ghost
 * variables record the lapses the protocol exempts.
 *
 * INVARIANTS (assertions, each on a variable named after it, which pan's report names):
 *   1. one_delivery_handler_ran_twice_at_once, two_handlers_of_one_resource_ran_at_once: when h
 *      starts, no other attempt is running it for the same delivery, nor any handler of the same
 *      resource, unless one of the two runs' leases lapsed.
 *   2. succeeded_handler_ran_again: when h starts, it has not succeeded for the delivery before,
 *      unless that success was lost before it was recorded (its attempt crashed, failed a call or
 *      lapsed) or the starting run's own lease lapsed.
 *   3. state_overwritten_by_older_version: a run whose lease did not lapse never writes a version
 *      older than one whose record an attempt without a lapse completed; and
 *      settled_state_older_than_handled_version: once the service has stopped and every attempt has
 *      ended, the state holds at least that newest recorded version, unless a lapsed run wrote last.
 *      A failed version advance that lands later is a write after a lapse only if, as it lands, the
 *      lease under which its attempt held the lock has lapsed and another claim has taken the lock
 *      over (a call that arrives long after it was given up, like a paused receiver's write);
 *      a lock its holder gave back never exempts it.
 *   4. answered_2xx_before_recorded: an attempt answers 2xx after running the handler's path only
 *      once h's record is completed (completion 'handler') or the resource's version is at least the
 *      delivery's (completion 'delivery', which has no record of h but the delivery key), unless its
 *      lease lapsed.
 *   6. stale_token_write_landed (the handler fence): h writes its effect for the delivery to a
 *      resource fenced by `context.fencingToken`, the store's count of claims of the delivery key: the
 *      resource refuses a write whose token is smaller than the last one it took (the run then
 *      throws, 500), so a run paused past its lease never writes over the run that took the
 *      delivery over. The assertion compares the true claim counts, not the token handed over.
 *      (The heartbeat's abort of the signal, the fence's other half, is not modelled: with abstract
 *      time a handler may always reach its write before any heartbeat tells it, and the token is
 *      what keeps that write out. The simulation checks the abort.)
 *   5. (-DLIVENESS) handled: every delivery is eventually answered 2xx, with the resource's version
 *      at least its own and (completion 'handler') h's record completed. Not that its delivery key
 *      is completed: the receiver answers 200 when that completion fails, as the handlers succeeded
 *      (steps/record.ts); -DCLAIM_DELIVERY_KEYS_COMPLETED checks that stronger claim, which fails.
 *
 * MUTANTS (each file in spec/mutants/ #defines one switch and #includes this file; each must fail):
 *   MUTANT_HEARTBEAT_DELIVERY_KEY_ONLY  the heartbeat renews only the delivery key
 *   MUTANT_COMPLETE_BEFORE_ADVANCE      the handler record is completed before the version advance
 *   MUTANT_CLAIM_IGNORES_LIVE_LEASE     claim takes a key even from another token's live lease
 *   MUTANT_RELEASE_AFTER_FAILED_ADVANCE a failed advance is not tried again and the lock is released
 *   MUTANT_ADVANCE_WITHOUT_COMPARE      the version advance records its version whatever is there
 *   MUTANT_STALE_CHECK_SKIPPED          the guard runs h whatever version it read
 *   MUTANT_FINISH_IGNORES_TOKEN         complete and release act on a lease whatever token holds it
 *   MUTANT_RECORD_FAILURE_ANSWERED_2XX  a failed completion of h's record is reported, and the
 *                                       attempt goes on to its 200
 *   MUTANT_FENCING_TOKEN_CONSTANT       every run hands the fenced resource the same token (1)
 * WITNESS_* switches turn a case the invariants exempt into a failing assertion, so the test can check
 * that the bounds reach it. The printf lines narrate a counterexample when spin replays its trail.
 */

#ifndef NRECV
#define NRECV 2
#endif
#ifndef NDEL
#define NDEL 2
#endif
#if NDEL < 2 || NDEL > 3
#error "NDEL is 2 or 3"
#endif
#if NRECV < 2 || NRECV > 3
#error "NRECV is 2 or 3"
#endif
#define NRES 1
#ifndef SENDS
#define SENDS 3
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef PAUSES
#define PAUSES 1
#endif
#ifndef FAILURES
#define FAILURES 1
#endif
#ifndef BUDGET
#define BUDGET 4
#endif

/* Keys: a delivery key and a handler key (deliveryKey#h) per delivery, a lock per resource. With
   completion 'delivery' the handler keys are never used. */
#define DKEY(d) (d)
#define HKEY(d) (NDEL + (d))
#define LKEY(r) (2 * NDEL + (r))
#define NKEYS (2 * NDEL + NRES)
#define RES(d) 0
#define VER(d) ((d) + 1)

/* A record: none | lease (its owner) | released | completed. */
#define NONE 0
#define LEASE 1
#define RELEASED 2
#define COMPLETED 3
/* A lease's owner is the receiver whose current attempt holds its token, or ORPHAN: a token that no
   running attempt holds any more. */
#define ORPHAN NRECV

/* What a store call answered. */
mtype = { acquired, in_progress, completed, failed, done, not_owner, nothing };

byte rec[NKEYS];
byte owner[NKEYS];
byte version[NRES];
byte state[NRES];       /* h's write: the version of the delivery it last ran for */
byte dclaims[NDEL];     /* the store's count of claims of the delivery key: the fencing token */
byte effTok[NDEL];      /* the fenced resource: the token of h's last write for the delivery */

byte failures = FAILURES;
byte crashes = CRASHES;
byte pauses = PAUSES;

/* Per receiver. */
bool busy[NRECV];       /* in an attempt */
byte cur[NRECV];        /* the attempt's delivery */
bool running[NRECV];    /* its handler is running */
bool paused[NRECV];     /* it stopped renewing its leases (paused, or past maxRunMs) */

/* Failed version advances that may still land: one slot per failure the bounds allow, so none is
   lost while another is pending. */
#if FAILURES > 4
#error "FAILURES above 4: add slots to FOR_SLOTS and the network"
#endif
#if FAILURES > 0
#define NLATE FAILURES
#else
#define NLATE 1
#endif
#if NLATE == 1
#define FOR_SLOTS(M) M(0)
#elif NLATE == 2
#define FOR_SLOTS(M) M(0); M(1)
#elif NLATE == 3
#define FOR_SLOTS(M) M(0); M(1); M(2)
#else
#define FOR_SLOTS(M) M(0); M(1); M(2); M(3)
#endif
byte lateD[NLATE];      /* 1 + the delivery whose failed version advance may still land; 0: none */

/* Ghosts: the lapses the protocol exempts, and what has been done. */
bool lapsed[NRECV];     /* a lease of the current attempt lapsed (while paused) and was taken over */
byte hstat[NDEL];       /* h's success for the delivery: 0 none (or lost before it was recorded),
                           1 a run returned and its attempt goes on, 2 recorded (its record completed) */
byte hby[NDEL];         /* with hstat 1: the receiver whose attempt ran it */
bool doneClean[NDEL];   /* h's record was completed by an attempt without a lapse, on a version
                           record that no write after a lapse set */
bool vTaint[NRES];      /* the version record was last set by a lapsed run, or by a failed advance
                           that landed after its attempt's lock was taken over */
bool sTaint[NRES];      /* the state was last written by a lapsed run */
bool lateHold[NLATE];   /* per failed advance: the lock's lease is still the one its attempt held */
bool lateTaken[NLATE];  /* that lease lapsed and another claim took the lock over */
byte effClaim[NDEL];    /* the true claim count of the run whose write the resource took last */

#ifdef LIVENESS
bool acked[NDEL];       /* the service got a 2xx for the delivery */
bool outstanding[NDEL]; /* an attempt of it is on its way or in progress */
byte tries[NDEL];
chan inbox = [NDEL] of { byte };
#else
byte sent;
bool serviceDone;
chan inbox = [SENDS] of { byte };
#endif

/* Witnesses (-DWITNESS_...): assertions that fail when the search reaches a case the invariants
   exempt, so the test can check that the bounds reach it at all. */
#ifdef WITNESS_RERUN_AFTER_LOST_SUCCESS
bool everSucceeded[NDEL];
#endif
#ifdef WITNESS_LATE_ADVANCE_AFTER_LOCK_LEFT
bool lateLeft[NLATE];   /* both tries of the call's attempt failed, and it left the lock to lapse */
#endif

/* Violations, named so that pan's report says which invariant failed. */
bool one_delivery_handler_ran_twice_at_once;
bool two_handlers_of_one_resource_ran_at_once;
bool succeeded_handler_ran_again;
bool state_overwritten_by_older_version;
bool settled_state_older_than_handled_version;
bool answered_2xx_before_recorded;
bool stale_token_write_landed;

/* ---- the store ---- */

#ifdef MUTANT_HEARTBEAT_DELIVERY_KEY_ONLY
/* The defect: while the handler runs, only the delivery key is extended. */
#define HEARTBEAT_COVERS(k, o) (!running[o] || (k) < NDEL)
#else
#define HEARTBEAT_COVERS(k, o) true
#endif
#define RENEWED(k) (owner[k] != ORPHAN && !paused[owner[k]] && HEARTBEAT_COVERS(k, owner[k]))

/* Another claim takes the lock over: a failed advance made under the lease it ends, landing from now
   on, lands after a lapse. */
#define LOCK_TAKEN(f) if :: lateHold[f] -> lateHold[f] = false; lateTaken[f] = true :: else -> skip fi
/* The lock's holder gave it back: an advance made under that lease, landing from now on, does not. */
#define LOCK_GIVEN_BACK(f) lateHold[f] = false
#define IS_LOCK(k) ((k) >= LKEY(0))

/* An acquired claim of a delivery key counts one more claim of it (a failed call that landed too).
   Not under LIVENESS: there the service retries only once no attempt is in progress, so no two runs of
   a delivery ever meet at the fenced resource, and counting would only multiply the states. */
#ifdef LIVENESS
#define COUNT_CLAIM(k) skip
#else
#define COUNT_CLAIM(k) if :: (k) < NDEL -> dclaims[k]++ :: else -> skip fi
#endif

/* The lease on k lapsed and this claim takes it over; the holder's lapse is exempt only if it was
   paused (or past maxRunMs). */
inline takeOver(k) {
  if
  :: owner[k] == ORPHAN -> printf("  (a lease that no running attempt renews lapsed)\n")
  :: owner[k] != ORPHAN && paused[owner[k]] ->
     printf("  (the lease of r%d lapsed while it was paused)\n", owner[k]); lapsed[owner[k]] = true
  :: else -> printf("  (the lease of r%d lapsed while it was renewing: not exempt)\n", owner[k])
  fi;
  if :: IS_LOCK(k) -> FOR_SLOTS(LOCK_TAKEN) :: else -> skip fi;
  owner[k] = me; res = acquired; COUNT_CLAIM(k)
}

/* claim(key, token), atomic: completed ⇒ completed; a live lease ⇒ in_progress; none, released or a
   lapsed lease ⇒ a lease for this attempt's token. */
inline doClaim(k) {
  if
  :: rec[k] == COMPLETED -> res = completed
  :: rec[k] == NONE || rec[k] == RELEASED -> rec[k] = LEASE; owner[k] = me; res = acquired; COUNT_CLAIM(k)
  :: rec[k] == LEASE && !RENEWED(k) -> takeOver(k)               /* it has lapsed */
#ifdef MUTANT_CLAIM_IGNORES_LIVE_LEASE
  :: rec[k] == LEASE && RENEWED(k) ->                            /* the defect */
     printf("  (the live lease of r%d taken over)\n", owner[k]);
     if :: IS_LOCK(k) -> FOR_SLOTS(LOCK_TAKEN) :: else -> skip fi;
     owner[k] = me; res = acquired; COUNT_CLAIM(k)
#else
  :: rec[k] == LEASE -> res = in_progress                        /* live, or not lapsed yet */
#endif
  fi
}

/* complete / release: only while the record holds this attempt's token (even past its expiry). */
#ifdef MUTANT_FINISH_IGNORES_TOKEN
#define HOLDS(k) true                                            /* the defect: any token will do */
#else
#define HOLDS(k) (owner[k] == me)
#endif
inline doFinish(k, to) {
  if
  :: rec[k] == LEASE && HOLDS(k) ->
     if :: IS_LOCK(k) -> FOR_SLOTS(LOCK_GIVEN_BACK) :: else -> skip fi;
     rec[k] = to; owner[k] = 0; res = done
  :: else -> res = not_owner
  fi
}

/* A store call may fail; a failed one may still have taken effect. */
#define FAILS (failures > 0)

inline claimKey(k) {
  if
  :: FAILS -> failures--; if :: doClaim(k) :: skip fi; res = failed
  :: true -> doClaim(k)
  fi
}

inline finishKey(k, to) {
  if
  :: FAILS -> failures--; if :: doFinish(k, to) :: skip fi; res = failed
  :: true -> doFinish(k, to)
  fi
}

/* advanceVersion(r, v): a compare-and-set that never goes backwards. `lapsedWrite` says whether the
   record it sets counts as a write after a lapse. */
inline setVersion(d, lapsedWrite) {
  if
#ifdef MUTANT_ADVANCE_WITHOUT_COMPARE
  :: true -> version[RES(d)] = VER(d); vTaint[RES(d)] = lapsedWrite   /* the defect: no compare */
#else
  :: VER(d) > version[RES(d)] -> version[RES(d)] = VER(d); vTaint[RES(d)] = lapsedWrite
  :: else -> skip
#endif
  fi
}

/* ---- the receiver's faults and ghost bookkeeping ---- */

/* Before any step: the receiver may crash, or stop renewing its leases from here on. */
inline faultPoint() {
  if
  :: crashes > 0 -> crashes--; printf("r%d: crashes\n", me); goto crashed
  :: pauses > 0 && !paused[me] ->
     pauses--; paused[me] = true; printf("r%d: pauses (its leases may lapse)\n", me)
  :: true -> skip
  fi
}

/* This attempt completed h's record (`clean`: on a version record no write after a lapse set). */
inline recordedH(d, clean) {
  if
  :: res == done -> hstat[d] = 2; doneClean[d] = doneClean[d] || (clean && !lapsed[me])
  :: else -> skip
  fi
}

/* The attempt gives up before recording h's success: a later run is not a re-run of a success. */
inline loseSuccess(d) {
  if
  :: hstat[d] == 1 && hby[d] == me -> hstat[d] = 0; hby[d] = 0
  :: else -> skip
  fi
}

#define RUNS_SAME_D(j) (j != me && running[j] && cur[j] == cur[me] && !lapsed[j] && !lapsed[me])
#define RUNS_SAME_R(j) (j != me && running[j] && RES(cur[j]) == RES(cur[me]) && !lapsed[j] && !lapsed[me])
#define RUNS_SAME_R_ANYHOW(j) (j != me && running[j] && RES(cur[j]) == RES(cur[me]))
#if NRECV > 2
#define ANY_RECEIVER(P) (P(0) || P(1) || P(2))
#else
#define ANY_RECEIVER(P) (P(0) || P(1))
#endif

/* A delivery of the resource newer than v whose record a clean attempt completed; the newest such. */
#define NEWER_DONE_BY(e, v) (VER(e) > (v) && doneClean[e])
#if NDEL == 3
#define NEWER_DONE(r, v) (NEWER_DONE_BY(0, v) || NEWER_DONE_BY(1, v) || NEWER_DONE_BY(2, v))
#define NEWEST_DONE(r) (doneClean[2] -> VER(2) : (doneClean[1] -> VER(1) : (doneClean[0] -> VER(0) : 0)))
#else
#define NEWER_DONE(r, v) (NEWER_DONE_BY(0, v) || NEWER_DONE_BY(1, v))
#define NEWEST_DONE(r) (doneClean[1] -> VER(1) : (doneClean[0] -> VER(0) : 0))
#endif

/* h starts: invariants 1 and 2. */
inline runBegins(d) {
  running[me] = true;
  printf("r%d d%d: h starts\n", me, d);
#ifdef WITNESS_OVERLAP_AFTER_LAPSE
  assert(!ANY_RECEIVER(RUNS_SAME_R_ANYHOW));
#endif
#ifdef WITNESS_RERUN_AFTER_LOST_SUCCESS
  assert(!everSucceeded[d]);
#endif
  one_delivery_handler_ran_twice_at_once = ANY_RECEIVER(RUNS_SAME_D);
  assert(!one_delivery_handler_ran_twice_at_once);
  two_handlers_of_one_resource_ran_at_once = ANY_RECEIVER(RUNS_SAME_R);
  assert(!two_handlers_of_one_resource_ran_at_once);
  succeeded_handler_ran_again = (hstat[d] == 2 || (hstat[d] == 1 && !lapsed[hby[d]])) && !lapsed[me];
  assert(!succeeded_handler_ran_again)
}

/* The token h hands the fenced resource: its context.fencingToken. */
#ifdef MUTANT_FENCING_TOKEN_CONSTANT
#define FENCE(t) 1                                               /* the defect: the same in every run */
#else
#define FENCE(t) (t)
#endif

/* h writes the resource's state (state[r] := v) with its fencing token, and returns: invariants 3 and 6. */
inline runWrites(d) {
  printf("r%d d%d: h writes state := %d (fencing token %d)\n", me, d, VER(d), FENCE(tok));
  stale_token_write_landed = tok < effClaim[d];
  assert(!stale_token_write_landed);
  effTok[d] = FENCE(tok); effClaim[d] = tok;
  state_overwritten_by_older_version = !lapsed[me] && NEWER_DONE(RES(d), VER(d));
  assert(!state_overwritten_by_older_version);
  state[RES(d)] = VER(d);
  sTaint[RES(d)] = lapsed[me];
  running[me] = false
}

/* What the service hears: a 2xx, or anything else (it retries). */
inline answer(d, ok) {
#ifdef LIVENESS
  acked[d] = acked[d] || ok; outstanding[d] = false
#else
  skip
#endif
}

/* The 200 at the end of the handler's path: invariant 4. */
#ifdef COMPLETION_DELIVERY
#define UNRECORDED(d) (version[RES(d)] < VER(d))
#else
#define UNRECORDED(d) (rec[HKEY(d)] != COMPLETED)
#endif
inline answerHandled(d) {
  answered_2xx_before_recorded = UNRECORDED(d) && !lapsed[me];
  assert(!answered_2xx_before_recorded);
  answer(d, true)
}

/* The attempt is over (answered, or crashed): the tokens it did not give back are nobody's now. */
inline endAttempt() {
  for (k : 0 .. NKEYS - 1) {
    if
    :: rec[k] == LEASE && owner[k] == me -> owner[k] = ORPHAN
    :: else -> skip
    fi
  }
  k = 0;
  loseSuccess(d);
  busy[me] = false; running[me] = false; paused[me] = false; lapsed[me] = false;
  cur[me] = 0; res = nothing; v = 0; tainted = false; d = 0; late = 0; tok = 0
}

/* One try of the version advance that answered. */
inline advanceOnce(d) {
  printf("r%d d%d: advanceVersion(%d)\n", me, d, VER(d));
  setVersion(d, lapsed[me])
}

/* One try of the version advance failed; the call may still land at any later time. Once one try's
   call may land, the other's adds nothing: both carry the same version, so whichever lands first
   decides and the other changes nothing, and the first may land wherever the second could. */
inline advanceFailed(d) {
  if
  :: late == 0 ->
     late = FAILURES - failures + 1;                      /* this failure's own slot */
     lateD[late - 1] = d + 1;
     lateHold[late - 1] = rec[LKEY(RES(d))] == LEASE && owner[LKEY(RES(d))] == me;
     lateTaken[late - 1] = !lateHold[late - 1];           /* taken over already, while it was paused */
     printf("r%d d%d: advanceVersion(%d): failed (the call may still land)\n", me, d, VER(d))
  :: late == 0 -> printf("r%d d%d: advanceVersion(%d): failed (the call is lost)\n", me, d, VER(d))
  :: late != 0 -> printf("r%d d%d: advanceVersion(%d): failed (may land, as the first)\n", me, d, VER(d))
  fi;
  failures--
}

/* Both tries failed: the attempt stops renewing the lock and does not release it, so it lapses like a
   lease that no running attempt holds. */
inline leaveLock(d) {
  if
  :: rec[LKEY(RES(d))] == LEASE && owner[LKEY(RES(d))] == me -> owner[LKEY(RES(d))] = ORPHAN
  :: else -> skip
  fi;
#ifdef WITNESS_LATE_ADVANCE_AFTER_LOCK_LEFT
  if :: late != 0 -> lateLeft[late - 1] = true :: else -> skip fi;
#endif
  printf("r%d d%d: lock left to lapse\n", me, d)
}

/* ---- the receiver: one delivery d through the guarded handler h ---- */
/* Each step is one store call (atomic in the store) together with the receiver's decision on its
   answer, which touches only the receiver's own variables: one atomic step. */
proctype Receiver(byte me) {
  byte d, v, k;
  byte late;            /* 1 + the slot of this attempt's failed advance that may still land; 0: none */
  byte tok;             /* its claim count of the delivery key: context.fencingToken */
  mtype res = nothing;
  bool tainted;         /* the version it read was set by a write after a lapse */
end_idle:
  do
  :: atomic {
       inbox?d -> busy[me] = true; cur[me] = d; printf("r%d: takes d%d (version %d)\n", me, d, VER(d))
     }
     /* 1. the delivery key (claim.ts): completed ⇒ 200 duplicate; in_progress ⇒ 409; failure ⇒ 503,
        nothing ran */
     atomic {
       faultPoint();
       claimKey(DKEY(d));
       printf("r%d d%d: claim delivery key: %e\n", me, d, res);
       if
       :: res == acquired -> res = nothing; tok = dclaims[d]
       :: res == completed -> res = nothing; answer(d, true); goto over
       :: else -> res = nothing; answer(d, false); goto over
       fi
     }
#ifndef COMPLETION_DELIVERY
     /* 2. h's record (run-guarded.ts, runEntry): completed ⇒ h succeeded on an earlier attempt, skip
        it; in_progress ⇒ 409, failure ⇒ 503 */
     atomic {
       faultPoint();
       claimKey(HKEY(d));
       printf("r%d d%d: claim handler key: %e\n", me, d, res);
       if
       :: res == acquired -> res = nothing
       :: res == completed -> res = nothing; goto settle
       :: else -> res = nothing; goto failD
       fi
     }
#endif
     /* 3. the ordering lock, same token (guard/order-lock.ts, guardedCall): not acquired ⇒ 409 resource busy, or 503 */
     atomic {
       faultPoint();
       claimKey(LKEY(RES(d)));
       printf("r%d d%d: claim lock: %e\n", me, d, res);
       if
       :: res == acquired -> res = nothing
       :: else -> res = nothing; goto failHD
       fi
     }
     /* 4. readVersion: current ≥ v ⇒ stale, skip h */
     atomic {
       faultPoint();
       if
       :: FAILS -> failures--; printf("r%d d%d: readVersion: failed\n", me, d); goto failLHD
       :: true ->
          v = version[RES(d)]; tainted = vTaint[RES(d)]; printf("r%d d%d: readVersion: %d\n", me, d, v)
       fi;
       if
#ifndef MUTANT_STALE_CHECK_SKIPPED
       :: v >= VER(d) ->
#ifdef WITNESS_STALE_SKIP
          assert(v < VER(d));
#endif
          v = 0; goto stale
#endif
       :: else -> v = 0; tainted = false
       fi
     }
     /* run h */
     atomic { faultPoint(); runBegins(d) }
     /* h's write, fenced: the resource refuses a token smaller than the last it took; h throws, 500 */
     atomic {
       faultPoint();
       if
       :: FENCE(tok) < effTok[d] ->
#ifdef WITNESS_FENCED_WRITE
          assert(FENCE(tok) >= effTok[d]);
#endif
          printf("r%d d%d: h's write refused (fencing token %d < %d): h throws\n", me, d, FENCE(tok), effTok[d]);
          running[me] = false; goto failLHD
       :: else -> runWrites(d)
       fi;
       if
       :: FAILS -> failures--; printf("r%d d%d: h throws\n", me, d); goto failLHD   /* 500 */
       :: true -> hstat[d] = (hstat[d] == 2 -> 2 : 1); hby[d] = (hstat[d] == 1 -> me : hby[d]);
#ifdef WITNESS_RERUN_AFTER_LOST_SUCCESS
          everSucceeded[d] = true
#else
          skip
#endif
       fi
     }
#if defined(MUTANT_COMPLETE_BEFORE_ADVANCE) && !defined(COMPLETION_DELIVERY)
     /* The defect: 6 before 5. */
     atomic {
       faultPoint();
       finishKey(HKEY(d), COMPLETED);
       printf("r%d d%d: complete handler key: %e\n", me, d, res);
       recordedH(d, true);
       if
       :: res == failed -> res = nothing; goto failLHD
       :: else -> res = nothing
       fi
     }
#endif
     /* 5. advanceVersion(r, v), compare-and-set, tried twice; a failed try may still land later */
     atomic {
       faultPoint();
       if
#ifdef MUTANT_RELEASE_AFTER_FAILED_ADVANCE
       /* The defect: no second try, and the lock is released at once. */
       :: FAILS -> advanceFailed(d); goto failLHD
#else
       :: FAILS -> advanceFailed(d)
#endif
       :: true -> advanceOnce(d); goto advanced
       fi
     }
     /* the second try; failed too ⇒ the lock is left to lapse (no longer renewed, not released), 503 */
     atomic {
       faultPoint();
       if
       :: FAILS -> advanceFailed(d); leaveLock(d); goto failHD
       :: true -> advanceOnce(d)
       fi
     }
advanced:
#if !defined(MUTANT_COMPLETE_BEFORE_ADVANCE) && !defined(COMPLETION_DELIVERY)
     /* 6. complete h's record (guard/store-calls.ts, completeRecord: answered false, the record was lost: reported, and on) */
     atomic {
       faultPoint();
       finishKey(HKEY(d), COMPLETED);
       printf("r%d d%d: complete handler key: %e\n", me, d, res);
       recordedH(d, true);
       if
#ifdef MUTANT_RECORD_FAILURE_ANSWERED_2XX
       :: res == failed -> res = nothing                         /* the defect: reported, and on */
#else
       :: res == failed -> res = nothing; goto failLHD
#endif
       :: else -> res = nothing
       fi
     }
#endif
     /* 7. release the lock (a failure is ignored: the lease lapses) */
     atomic {
       faultPoint();
       finishKey(LKEY(RES(d)), RELEASED);
       printf("r%d d%d: release lock: %e\n", me, d, res);
       res = nothing; goto settle
     }
stale:
#ifndef COMPLETION_DELIVERY
     /* stale: complete h's record, release the lock */
     atomic {
       faultPoint();
       finishKey(HKEY(d), COMPLETED);
       printf("r%d d%d: stale, complete handler key: %e\n", me, d, res);
       recordedH(d, !tainted);
       tainted = false;
       if
       :: res == failed -> res = nothing; goto failLHD
       :: else -> res = nothing
       fi
     }
#endif
     /* (completion 'delivery': stale, nothing to complete but the delivery key at 8) */
     atomic {
       faultPoint();
       finishKey(LKEY(RES(d)), RELEASED);
       printf("r%d d%d: release lock: %e\n", me, d, res);
       res = nothing
     }
settle:
     /* 8. settle.ts and record.ts: another handler of the delivery may have failed (handlers with
        records of their own go on after a failure: 500, the delivery key is released); otherwise
        complete the delivery key and answer 200, even when that completion fails (it is reported:
        the handlers succeeded) */
     atomic {
       faultPoint();
       if
       :: FAILS -> failures--; printf("r%d d%d: another handler of the delivery failed\n", me, d); goto failD
       :: true ->
          finishKey(DKEY(d), COMPLETED);
          printf("r%d d%d: complete delivery key: %e, answers 200\n", me, d, res);
#ifdef COMPLETION_DELIVERY
          recordedH(d, !tainted);                                /* the delivery key is h's record */
#endif
          answerHandled(d); res = nothing; goto over
       fi
     }
failLHD:
     /* the attempt failed: a success of h that it did not record is lost; it releases what it holds */
     atomic {
       faultPoint();
       loseSuccess(d);
       finishKey(LKEY(RES(d)), RELEASED);
       printf("r%d d%d: release lock: %e\n", me, d, res);
       res = nothing
     }
failHD:
#ifndef COMPLETION_DELIVERY
     atomic {
       faultPoint();
       loseSuccess(d);
       finishKey(HKEY(d), RELEASED);
       printf("r%d d%d: release handler key: %e\n", me, d, res);
       res = nothing
     }
#endif
failD:
     atomic {
       faultPoint();
       loseSuccess(d);
       finishKey(DKEY(d), RELEASED);
       printf("r%d d%d: release delivery key: %e\n", me, d, res);
       res = nothing; answer(d, false); goto over
     }
crashed:
     atomic {
#ifdef LIVENESS
       outstanding[d] = false;                                    /* the service times out */
#endif
       endAttempt()
     }
     goto end_idle;
over:
     atomic { endAttempt() }
  od
}

/* ---- calls that land late ---- */

/* A failed version advance lands. It is a write after a lapse only if the lease under which its
   attempt held the lock lapsed first and another claim took the lock over: never because the lock was
   given back. */
#ifdef WITNESS_LATE_ADVANCE_AFTER_LOCK_LOST
#define WITNESS_LATE(f, r) assert(!lateTaken[f])
#elif defined(WITNESS_LATE_ADVANCE_AFTER_LOCK_LEFT)
/* The case the fix leaves exempt: both tries failed, the lock left to lapse was taken over, an older
   delivery wrote its state, and the advance lands over it. */
#define WITNESS_LATE(f, r) assert(!(lateLeft[f] && lateTaken[f] && state[r] < VER(lateD[f] - 1)))
#else
#define WITNESS_LATE(f, r) skip
#endif
#ifdef WITNESS_LATE_ADVANCE_AFTER_LOCK_LEFT
#define FORGET_LEFT(f) lateLeft[f] = false
#else
#define FORGET_LEFT(f) skip
#endif

#define LAND(f) \
  :: atomic { lateD[f] != 0 -> \
       printf("network: the failed advanceVersion(%d) lands\n", VER(lateD[f] - 1)); \
       if \
       :: VER(lateD[f] - 1) > version[RES(lateD[f] - 1)] -> WITNESS_LATE(f, RES(lateD[f] - 1)) \
       :: else -> skip \
       fi; \
       setVersion(lateD[f] - 1, lateTaken[f]); \
       lateD[f] = 0; lateHold[f] = false; lateTaken[f] = false; FORGET_LEFT(f) }

active proctype Network() {
end_network:
  do
  LAND(0)
#if NLATE > 1
  LAND(1)
#endif
#if NLATE > 2
  LAND(2)
#endif
#if NLATE > 3
  LAND(3)
#endif
  od
}

/* ---- the service ---- */

#if NRECV > 2
#define IDLE (!busy[0] && !busy[1] && !busy[2])
#else
#define IDLE (!busy[0] && !busy[1])
#endif

#ifdef LIVENESS
/* A retry comes once no attempt is in progress; by then every lease that nobody renews has lapsed. */
inline lapseOrphans() {
  for (k : 0 .. NKEYS - 1) {
    if
    :: rec[k] == LEASE && owner[k] == ORPHAN ->
       if :: IS_LOCK(k) -> FOR_SLOTS(LOCK_TAKEN) :: else -> skip fi;
       rec[k] = RELEASED; owner[k] = 0
    :: else -> skip
    fi
  }
  k = 0
}

#define SEND(d) \
  :: atomic { !acked[d] && !outstanding[d] && tries[d] < BUDGET && (tries[d] == 0 || IDLE) -> \
       if :: tries[d] > 0 -> lapseOrphans() :: else -> skip fi; \
       tries[d]++; outstanding[d] = true; inbox!d; printf("service: sends d%d\n", d) }

active proctype Service() {
  byte k;
end_service:
  do
  SEND(0)
  SEND(1)
#if NDEL == 3
  SEND(2)
#endif
  od
}

/* The claim `handled`: every delivery is eventually answered 2xx, its resource's version at least its
   own and (completion 'handler') h's record completed. */
#ifdef COMPLETION_DELIVERY
#define RECORDED(d) true
#else
#define RECORDED(d) (rec[HKEY(d)] == COMPLETED)
#endif
#define HANDLED(d) (acked[d] && version[RES(d)] >= VER(d) && RECORDED(d))
#if NDEL == 3
#define ALL_HANDLED (HANDLED(0) && HANDLED(1) && HANDLED(2))
#define ALL_DKEYS_COMPLETED (rec[DKEY(0)] == COMPLETED && rec[DKEY(1)] == COMPLETED && rec[DKEY(2)] == COMPLETED)
#else
#define ALL_HANDLED (HANDLED(0) && HANDLED(1))
#define ALL_DKEYS_COMPLETED (rec[DKEY(0)] == COMPLETED && rec[DKEY(1)] == COMPLETED)
#endif
#ifdef CLAIM_DELIVERY_KEYS_COMPLETED
/* Stronger, and false: a 200 whose delivery key's completion failed leaves that key uncompleted. */
ltl delivery_keys_completed { <> ALL_DKEYS_COMPLETED }
#else
ltl handled { <> ALL_HANDLED }
#endif
#else
#define SEND_COPY(d) :: atomic { sent < SENDS -> sent++; inbox!d; printf("service: sends d%d\n", d) }

active proctype Service() {
  do
  SEND_COPY(0)
  SEND_COPY(1)
#if NDEL == 3
  SEND_COPY(2)
#endif
  :: break
  od;
  serviceDone = true
}

/* Invariant 3 once everything has settled. */
active proctype Settled() {
end_settled:
  atomic {
    serviceDone && len(inbox) == 0 && IDLE ->
    printf("settled: state %d, version %d\n", state[0], version[0]);
    settled_state_older_than_handled_version = !sTaint[0] && state[0] < NEWEST_DONE(0);
    assert(!settled_state_older_than_handled_version)
  }
}
#endif

init {
  atomic {
    byte i;
    for (i : 0 .. NRECV - 1) { run Receiver(i) }
  }
}
